# hawkeye-env's served env (the OpenEnv protocol: HTTP + WebSocket on port 8000), one judge for all sessions.
#
#   docker build -t hawkeye-env:cpu .                       # CPU: the Triton interpreter judges, untimed
#   docker run --rm -p 8000:8000 --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#       -v hawkeye-verdicts:/data hawkeye-env:cpu
#
# CUDA (timed verdicts): the same file with torch's CUDA wheels and the judge on the GPU; run it with
# the NVIDIA container toolkit's --gpus:
#   docker build -t hawkeye-env:cuda --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu130 \
#       --build-arg JUDGE_DEVICE=cuda .
#   docker run --rm --gpus all -p 8000:8000 --security-opt seccomp=unconfined \
#       --security-opt apparmor=unconfined -v hawkeye-verdicts:/data hawkeye-env:cuda
#
# The judge runs every candidate in a bubblewrap sandbox, which builds user namespaces: Docker's
# default seccomp and AppArmor profiles forbid that, hence the two --security-opt flags. Settings
# are environment variables (-e NAME=VALUE), listed in hawkeye_env/server/app.py's SETTINGS.
FROM python:3.11-slim

ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG JUDGE_DEVICE=cpu

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/*
RUN pip install "torch==${TORCH_VERSION}" --index-url "${TORCH_INDEX_URL}"

WORKDIR /app
COPY pyproject.toml README.md ./
COPY hawkeye_env ./hawkeye_env
COPY units ./units
COPY reward ./reward
COPY policies ./policies
COPY training ./training
COPY evals ./evals
RUN pip install ".[serve]"

ENV HAWKEYE_JUDGE_DEVICE=${JUDGE_DEVICE} HAWKEYE_STORE=/data/verdicts.sqlite3
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=60s --retries=3 \
    CMD curl -fs http://localhost:8000/health || exit 1
CMD ["uvicorn", "hawkeye_env.server.app:app", "--host", "0.0.0.0", "--port", "8000", "--ws-max-size", "4194304"]
