"""`python tests/vllm_follow.py MODEL_DIR colocate|server [BASE_URL]`: does vLLM follow the trainer's weights?

Run by tests/test_vllm_cpu.py in its own process (a colocated engine joins a process group and sets RANK and
friends in the environment). Prints one JSON line: the log-probability of a fixed text under the trainer's model
(transformers) and under vLLM, before the trainer's weights change, after they change but before a sync
(vLLM must still hold the old weights, or the test could not tell a sync from no sync), and after
`CpuVLLMGeneration.sync_weights`.
"""

from __future__ import annotations

import json
import sys

TEXT = "<|im_start|>user\nIs A true?<|im_end|>\n<|im_start|>assistant\n<answer>True</answer>"


def trainer_logprob(model, tokenizer) -> float:
    import torch

    ids = tokenizer(TEXT, return_tensors="pt").input_ids
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0, :-1].float(), -1)
    return float(logp.gather(1, ids[0, 1:, None]).sum())


def _sum(prompt_logprobs) -> float:
    """Sum of the prompt tokens' own log-probs (the first token has none)."""
    total = 0.0
    for entry in prompt_logprobs[1:]:
        first = next(iter(entry.values()))
        total += first["logprob"] if isinstance(first, dict) else first.logprob
    return total


def main(model_dir: str, mode: str, base_url: str | None = None) -> dict:
    import torch
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prosfi.train.vllm_cpu import _generation_class

    accelerator = Accelerator(cpu=True)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    kwargs = ({"server_base_url": base_url, "server_timeout": 60.0} if mode == "server"
              else {"max_model_length": 512, "max_num_seqs": 4})
    generation = _generation_class()(model=model, accelerator=accelerator, processing_class=tokenizer, mode=mode,
                                     **kwargs)

    def engine_logprob() -> float:
        if mode == "colocate":
            from vllm import SamplingParams

            out = generation.llm.generate([TEXT], SamplingParams(max_tokens=1, prompt_logprobs=0), use_tqdm=False)
            return _sum(out[0].prompt_logprobs)
        client = generation.vllm_client
        body = {"model": client.model, "prompt": TEXT, "max_tokens": 1, "prompt_logprobs": 0}
        reply = client.session.post(f"{client.base_url}/v1/completions", json=body)
        reply.raise_for_status()
        return _sum(reply.json()["choices"][0]["prompt_logprobs"])

    result = {"trainer_before": trainer_logprob(model, tokenizer), "engine_before": engine_logprob()}
    torch.manual_seed(0)
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn_like(param) * 0.05)
    result["trainer_after"] = trainer_logprob(model, tokenizer)
    result["engine_stale"] = engine_logprob()
    generation.sync_weights()
    result["engine_after"] = engine_logprob()
    generation.close_weights_dir()
    return result


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])), flush=True)
