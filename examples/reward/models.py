"""The models under test in this example, stand-ins for three versions of an assistant (replace them with your
own): ``load`` repeats the question back, ``load_brief`` answers with the reference's first three words, and
``load_full`` answers with the whole reference."""


def load(model_path):
    return lambda batch: [f"You asked: {q}" for q in batch["query"]]


def load_brief(model_path):
    return lambda batch: [" ".join(r.split()[:3]) for r in batch["reference"]]


def load_full(model_path):
    return lambda batch: list(batch["reference"])
