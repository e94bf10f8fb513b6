"""core/crypto.py: a key rotates without losing what the old one encrypted; a token no key opens is an
error, logged without the value, and the org's chat model then gives way to the rule path."""

import logging

import pytest

from checkpoints.services import messages_append
from core.crypto import DecryptionError, decrypt, encrypt
from memory.extraction.services import extraction_job_run
from memory.llm import llm_config_set, llm_for

from .openai_server import OpenAIStub

SECRET = "sk-test-rotation-0123456789abcdef"


def test_a_new_key_listed_first_still_opens_what_the_old_one_encrypted(settings):
    settings.ENGRAM_ENCRYPTION_KEY = "old-key-material"
    token = encrypt(SECRET)
    settings.ENGRAM_ENCRYPTION_KEY = "new-key-material, old-key-material"
    assert decrypt(token) == SECRET
    fresh = encrypt(SECRET)  # the first key encrypts
    settings.ENGRAM_ENCRYPTION_KEY = "new-key-material"
    assert decrypt(fresh) == SECRET
    with pytest.raises(DecryptionError):
        decrypt(token)  # the old key is gone, and with it what only it opened


def test_a_token_no_key_opens_raises_and_is_logged_without_the_value(settings, caplog):
    settings.ENGRAM_ENCRYPTION_KEY = "old-key-material"
    token = encrypt(SECRET)
    settings.ENGRAM_ENCRYPTION_KEY = "another-key-material"
    with caplog.at_level(logging.ERROR, logger="core.crypto"), pytest.raises(DecryptionError) as failure:
        decrypt(token)
    [record] = [r for r in caplog.records if r.name == "core.crypto"]
    assert record.levelno == logging.ERROR and "ENGRAM_ENCRYPTION_KEY" in record.getMessage()
    for text in (caplog.text, str(failure.value)):
        assert SECRET not in text and token not in text
    assert decrypt("") == ""  # nothing stored is not an error


def test_the_org_model_gives_way_to_the_rules_when_its_key_cannot_be_opened(settings, org_a, caplog):
    settings.ENGRAM_LLM_BASE_URL = ""  # no server model to fall back on
    settings.ENGRAM_ENCRYPTION_KEY = "old-key-material"
    with OpenAIStub() as stub:
        llm_config_set(org=org_a, base_url=stub.base_url, model="stub-chat", api_key=SECRET)
        settings.ENGRAM_ENCRYPTION_KEY = "new-key-material,old-key-material"
        assert llm_for(org_a).api_key == SECRET  # rotated: the org's model keeps working

        settings.ENGRAM_ENCRYPTION_KEY = "new-key-material"  # the old key dropped too early
        with caplog.at_level(logging.ERROR, logger="core.crypto"):
            assert llm_for(org_a) is None
            _, _, job = messages_append(
                org=org_a,
                session_id="s1",
                user_id="u1",
                messages=[
                    {"role": "human", "content": "请记住，我对花生过敏，点菜时注意", "message_id": "m1"}
                ],
            )
            assert extraction_job_run(job_id=job.pk) == "done"
        assert stub.requests == []  # the model was never called with a key it does not have
    job.refresh_from_db()
    assert job.method == "rules"
    assert [a["content"] for a in job.result["added"]] == ["用户对花生过敏"]
    levels = [r.levelno for r in caplog.records if r.name == "core.crypto"]
    assert len(levels) >= 2 and set(levels) == {logging.ERROR}  # each time the key was needed
    assert SECRET not in caplog.text
