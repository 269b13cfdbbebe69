"""Stand-in for transformers' tokenizer API (Debian has no transformers),
enough for benchmark_serving.py's random dataset against the mock engine,
which needs no real vocabulary: token id i is the word "t<i>", so decode
and encode round-trip and a prompt keeps its drawn length. Used only by
BenchmarkOfficialClient (official_bench_test.go)."""
import zlib


class _Encoding:
    def __init__(self, input_ids):
        self.input_ids = input_ids


class PreTrainedTokenizerBase:
    vocab_size = 32000

    def __init__(self, name=""):
        self.name_or_path = name

    def __len__(self):
        return self.vocab_size

    def _id(self, word):
        if word[:1] == "t" and word[1:].isdigit():
            return int(word[1:]) % self.vocab_size
        return zlib.crc32(word.encode()) % self.vocab_size

    def encode(self, text, add_special_tokens=True, **kwargs):
        return [self._id(w) for w in text.split()]

    def decode(self, ids, **kwargs):
        return " ".join("t%d" % int(i) for i in ids)

    def __call__(self, text, add_special_tokens=True, **kwargs):
        if isinstance(text, list):
            return _Encoding([self.encode(t) for t in text])
        return _Encoding(self.encode(text))

    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=False, **kwargs):
        text = " ".join(m["content"] for m in messages)
        return self.encode(text) if tokenize else text


PreTrainedTokenizer = PreTrainedTokenizerBase
PreTrainedTokenizerFast = PreTrainedTokenizerBase


class AutoTokenizer:
    @staticmethod
    def from_pretrained(name, **kwargs):
        return PreTrainedTokenizerBase(name)
