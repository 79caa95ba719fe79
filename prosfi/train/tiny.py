"""A tiny random Qwen2 model and a tokenizer trained locally on the task's own text.

The CPU demo and the tests need a causal LM that loads offline with `from_pretrained(DIR)`:
no hub, no downloads. The tokenizer is a byte-level BPE trained on generated problems, gold
traces and the formula language's symbols, so traces are short in tokens; it carries a
Qwen-style chat template (`<|im_start|>role ... <|im_end|>`) so TRL's conversational paths
work unchanged.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

PAD_TOKEN = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIAL_TOKENS = [PAD_TOKEN, IM_START, IM_END]

# Qwen2.5's template, reduced to what prosfi uses (system/user/assistant turns, no tools).
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# Symbols and markup the policy writes; always in the corpus so they get their own tokens even
# when the generated problems happen not to use them.
_FORMULA_TEXT = [
    "∀ x, P x → Q x", "∃ x, P x ∧ Q x", "¬ A", "A ∧ B", "A ∨ B", "A → B", "A ↔ B", "a ≠ b", "a = b",
    "Xor' A B", "True", "False", "∀ (x : T), P x", "forall x, P x -> Q x", "exists x, P x /\\ Q x",
    "A <-> B", "A \\/ B",
]
_MARKUP_TEXT = [
    "<think>\n", "\n</think>\n", "<steps>\n", "\n</steps>\n", "<answer>", "</answer>",
    '{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Knight zoey", "rule": "modus_ponens"}',
    '"id"', '"dependencies"', '"conclusion"', '"rule"', "modus_tollens", "iff_elimination",
    "and_introduction", "and_elimination", "or_elimination", "contradiction", "universal_elimination",
    "disjunctive_syllogism", "(1) Zoey is a knave (2) Oliver is a knight", "A) True", "B) False",
    "C) Uncertain", "The correct option is:",
]


@dataclass
class TinyModelConfig:
    """Shape of the tiny model; small enough that a GRPO step takes seconds on one CPU core."""

    vocab_size: int = field(default=1024, metadata={"help": "target BPE vocabulary size"})
    hidden_size: int = field(default=64, metadata={"help": "model width"})
    intermediate_size: int = field(default=256, metadata={"help": "MLP width"})
    num_hidden_layers: int = field(default=2, metadata={"help": "transformer layers"})
    num_attention_heads: int = field(default=4, metadata={"help": "attention heads"})
    num_key_value_heads: int = field(default=2, metadata={"help": "key/value heads (GQA)"})
    max_position_embeddings: int = field(default=2048, metadata={"help": "longest sequence"})
    embedding_init_std: float = field(
        default=0.0,
        metadata={"help": "std of the initial token embeddings (0: the model's initializer_range, 0.02); larger "
                  "keeps interchangeable tokens such as names apart, so a tiny model can learn to copy them"},
    )
    tie_word_embeddings: bool = field(default=True, metadata={"help": "share input and output embeddings"})
    corpus_problems: int = field(default=300, metadata={"help": "generated problems to train the tokenizer on"})
    corpus: str = field(
        default="kk,proverqa_gen",
        metadata={"help": "comma-separated dataset specs whose generated prompts and gold traces the tokenizer "
                  "learns from (the CPU demo uses only its own task, toy, so its words are single tokens)"},
    )
    seed: int = field(default=0, metadata={"help": "seed for the corpus, the tokenizer and the weights"})


def task_corpus(num_problems: int, seed: int, specs: Iterable[str] = ("kk", "proverqa_gen"),
                system_prompt: str | None = None) -> Iterator[str]:
    """Text the tokenizer learns from: generated prompts and gold traces plus fixed symbols.

    Uses prosfi's own generators when they are installed; the fixed symbol text alone still
    yields a working (if less compact) tokenizer.
    """
    yield from _FORMULA_TEXT
    yield from _MARKUP_TEXT
    yield from _generated_text(num_problems, seed, specs, system_prompt)


def _generated_text(num_problems: int, seed: int, specs: Iterable[str], system_prompt: str | None) -> Iterator[str]:
    try:
        from prosfi.train.problems import generate_problems
        from prosfi.train.rows import gold_text, prompt_text
    except ImportError:  # data generators not available: symbols only
        return
    for spec in specs:
        name, _, difficulty = spec.partition(":")  # "physics:demo": a dataset with its difficulty
        try:
            problems = generate_problems(name, num_problems, seed=seed, difficulty=difficulty or None)
        except (ImportError, ValueError):
            continue
        for problem in problems:
            yield prompt_text(problem, system_prompt)
            gold = gold_text(problem)
            if gold:
                yield gold


def train_tokenizer(texts: Iterable[str], vocab_size: int):
    """Byte-level BPE over `texts`, wrapped as a transformers fast tokenizer with the chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=IM_END,
        pad_token=PAD_TOKEN,
        additional_special_tokens=[IM_START],
        model_max_length=4096,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tiny_model(out_dir: str | Path, config: TinyModelConfig | None = None,
                     system_prompt: str | None = None) -> Path:
    """Train the tokenizer, initialise a random Qwen2ForCausalLM, save both under `out_dir`.

    `system_prompt` (a recipe's) goes into the tokenizer's corpus, so it costs few tokens per row."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    config = config or TinyModelConfig()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    random.seed(config.seed)
    torch.manual_seed(config.seed)

    specs = [s.strip() for s in config.corpus.split(",") if s.strip()]
    tokenizer = train_tokenizer(task_corpus(config.corpus_problems, config.seed, specs, system_prompt),
                                config.vocab_size)
    model_config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        num_key_value_heads=config.num_key_value_heads,
        max_position_embeddings=config.max_position_embeddings,
        tie_word_embeddings=config.tie_word_embeddings,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = Qwen2ForCausalLM(model_config)
    if config.embedding_init_std > 0:
        with torch.no_grad():
            model.get_input_embeddings().weight.normal_(0.0, config.embedding_init_std)
            if not config.tie_word_embeddings:
                model.get_output_embeddings().weight.normal_(0.0, config.embedding_init_std)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=True
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "prosfi_tiny.json").write_text(json.dumps(asdict(config), indent=2) + "\n")
    return out


def is_model_dir(path: str | Path) -> bool:
    """True when `path` holds a saved model (config plus weights), so building can be skipped."""
    p = Path(path)
    return (p / "config.json").is_file() and any(p.glob("*.safetensors"))
