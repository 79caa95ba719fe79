"""Process reward models on verifier labels (FoVer) and groundedness (NS-PRM).

label → dataset → train (SFT: "correct"/"incorrect" per step; pairwise: a reward head on CSP pairs)
→ score → Best-of-K rerank and step-level meta-evaluation; CSP negatives and verifier-first beam
search. Heavy imports (torch, transformers, TRL) stay inside the functions that need them.
"""
