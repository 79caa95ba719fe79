"""Benchmark: SmolLM2-135M-Instruct (`prosfi model smollm2`) generation speed with transformers (not a test).

One greedy `generate` over a batch of toy problems with the prompts `prosfi eval` builds (`--few-shot K`
worked examples; K=0 with a one-line system prompt is the short-prompt case), timed in two parts: the
prompt (prefill, one forward over the padded batch) and the decoding that follows. Every completion is
forced to run `--new-tokens` tokens (no early stop at <|im_end|>), so tokens/s counts every decoded token.
Torch's thread count is `--threads` (1 is fastest when the cores are shared). Wall times depend on what
else runs on the machine: give the load average with any figure.

    python bench/bench_smollm2.py runs/smollm2 [--batch 8] [--new-tokens 64] [--few-shot 2] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="the folder `prosfi model smollm2 --out` wrote")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--few-shot", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import torch

    from prosfi.data.toy import ToyConfig, generate
    from prosfi.eval.generate import PromptSettings, build_prompts, load_hf

    torch.set_num_threads(args.threads)
    model, tok = load_hf(args.model, device="cpu", dtype="float32")
    tok.padding_side = "left"
    settings = PromptSettings(few_shot=args.few_shot,
                              system_prompt=None if args.few_shot else "Answer in the steps format.")
    texts = [tok.apply_chat_template(m, add_generation_prompt=True, tokenize=False)
             for m in build_prompts(generate(ToyConfig(), args.batch, seed=5), settings)]
    enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        start = time.perf_counter()
        model(**enc)
        prefill = time.perf_counter() - start
        start = time.perf_counter()
        out = model.generate(**enc, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False,
                             pad_token_id=tok.pad_token_id)
        total = time.perf_counter() - start
    new = (out.shape[1] - enc["input_ids"].shape[1]) * args.batch
    decode = max(total - prefill, 1e-9)
    load = os.getloadavg()[0]
    print(f"batch {args.batch}, prompt {enc['input_ids'].shape[1]} tokens (padded), {args.new_tokens} new tokens each, "
          f"{args.threads} thread(s), load average {load:.1f}")
    print(f"prefill {prefill:.1f} s; generate {total:.1f} s in all: {new / total:.1f} tokens/s overall, "
          f"{new / decode:.1f} tokens/s decoding (generate minus one prefill)")


if __name__ == "__main__":
    main()
