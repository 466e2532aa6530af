import llama_cpp, time, sys, random

sys.path.insert(0, ".")
from pathlib import Path
from ingest.embedding import LlamaEmbedder
from docqa.settings import EmbedSettings

e = LlamaEmbedder(Path("/root/w/emb.gguf"), EmbedSettings(n_ctx=8192))
toks = e._tokens("agreement party shall term notice " * 700)[:3400]


def timed(label, lists):
    e._embed_tokens([lists[0]])
    t = time.perf_counter()
    for l in lists:
        e._embed_tokens([l])
    print(label, (time.perf_counter() - t) / len(lists) * 1000, "ms/text", flush=True)


timed("same length", [toks[:3361]] * 10)
timed("varied length", [toks[: 3300 + 7 * i] for i in range(10)])
timed("padded to 64", [toks[:3328] for i in range(10)])
texts = ["agreement party shall term notice " * (650 + i) for i in range(10)]
t = time.perf_counter()
e.embed_documents(texts)
print("embed_documents", (time.perf_counter() - t) * 100, "ms/text")
t = time.perf_counter()
[e._tokens(x) for x in texts]
print("tokenize", (time.perf_counter() - t) * 100, "ms/text")
