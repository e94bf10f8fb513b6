from openai import OpenAI

from .openai_server import Fail, OpenAIStub


def test_it_serves_embeddings_and_scripted_chat():
    with OpenAIStub() as stub:
        client = OpenAI(base_url=stub.base_url, api_key="x", max_retries=0)
        emb = client.embeddings.create(model="m", input=["a", "b"], dimensions=8)
        assert [len(d.embedding) for d in emb.data] == [8, 8]
        stub.chat_replies.extend(['{"ok": 1}', Fail(500)])
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == '{"ok": 1}'
        try:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        except Exception as exc:
            assert "500" in str(exc) or getattr(exc, "status_code", None) == 500
        else:
            raise AssertionError("expected a 500")
        assert len(stub.requests) == 3
