from projects.models import ApiKey, Project


def test_it_creates_a_project_and_lists_it_for_its_owner(alice_client, org_a):
    response = alice_client.post("/api/v1/projects", {"name": "Zeta"}, format="json")
    assert response.status_code == 201, response.content
    assert Project.objects.filter(org=org_a, slug="zeta").exists()
    listing = alice_client.get("/api/v1/projects")
    assert [p["slug"] for p in listing.json()["results"]] == ["zeta"]
    assert listing.json()["results"][0]["role"] == "owner"


def test_it_stores_api_keys_hashed(alice_client, org_a):
    response = alice_client.post("/api/v1/api-keys", {"name": "bot"}, format="json")
    assert response.status_code == 201
    secret = response.json()["secret"]
    key = ApiKey.objects.get(org=org_a, name="bot")
    assert secret not in (key.hashed_secret, key.prefix)
    assert secret.startswith(key.prefix)
