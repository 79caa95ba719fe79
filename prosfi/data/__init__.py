"""Problems and what is built from them (docs/data.md).

problem      the Problem schema, JSONL IO and validation
kk           Knights & Knaves: generator, formalisation, public-record mapping
pqa_gen      ProverQA-style offline generator (with pqa_vocab)
fol          ProverQA notation -> Lean syntax;  proverqa: public-record mapping and loader
hub          raw file downloads from the Hugging Face hub, on request only
labels       True/False/Uncertain labels confirmed by the verifier
kk_proof, fol_proof, gold   gold step derivations and completions
prompts      system prompt, user prompt, TRL rows
cli          `prosfi data`
Submodules are imported on use; importing this package costs nothing.
"""
