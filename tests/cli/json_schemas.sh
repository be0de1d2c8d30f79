#!/usr/bin/env bash
# Every JSON document collbench writes validates against its schema in docs/schema/ (JSON Schema
# draft 2020-12, checked with python3-jsonschema): run --json, export runs/results/samples as JSON
# and JSON lines (a collbench run and an imported one), diag links --json, proxy --json,
# replay --json, predict --json.
# Usage: json_schemas.sh /path/to/collbench
set -uo pipefail
cb=${1:?usage: json_schemas.sh COLLBENCH}
source "$(dirname "$0")/lib/common.sh"
scratch schemas
schemas=$src/docs/schema
python3 -c 'import jsonschema' 2>/dev/null || {
  echo "FAIL: python3 has no jsonschema module (scripts/install-deps.sh installs python3-jsonschema)"
  exit 1
}

# validate SCHEMA FILE KIND: KIND is doc (one document), array (each item) or lines (each line).
validate() {
  python3 - "$schemas/$1" "$2" "$3" <<'PY' || fail "$2 does not validate against $1"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
text = open(sys.argv[2]).read()
kind = sys.argv[3]
if kind == "doc":
    docs = [json.loads(text)]
elif kind == "array":
    docs = json.loads(text)
    assert isinstance(docs, list)
else:
    docs = [json.loads(line) for line in text.splitlines()]
assert docs, "no document"
for i, doc in enumerate(docs):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        print(f"  item {i}: {'/'.join(map(str, e.path))}: {e.message[:200]}")
    assert not errors
print(f"{sys.argv[2].rsplit('/', 1)[-1]}: {len(docs)} valid")
PY
}

expect 0 "$cb" run allreduce,broadcast --np 2 -b 1K -e 4K -f 4 -n 3 -w 1 --algo ring --format none \
  --db "$db" --json "$tmp/run.json"
validate results.v2.schema.json "$tmp/run.json" doc
expect 0 "$cb" import "$src/tests/data/inspector/inspector_2node_16rank_allreduce.jsonl" --db "$db"
# diag links exits 1 when it names a suspect (3 rank threads on a busy machine may), 3 when its
# schedules disagree too much to judge: the document is written either way.
"$cb" diag links --np 3 --db "$db" --size 64K --latency-iters 20 --json "$tmp/diag.json" >/dev/null 2>&1
rc=$?
[ "$rc" -le 1 ] || [ "$rc" -eq 3 ] || fail "diag links exited $rc"
validate diag.v1.schema.json "$tmp/diag.json" doc
expect 0 "$cb" proxy dp --np 2 --model bert-large --layers 2 --steps 2 -w 1 --compute 0 --db "$db" \
  --json "$tmp/proxy.json"
validate proxy.v2.schema.json "$tmp/proxy.json" doc
expect 0 "$cb" replay "$src/tests/data/traces/pytorch-et/param-dlrm-8rank/dlrm_eg_{rank}.json.gz" \
  --kineto "$src/tests/data/traces/kineto/param-dlrm-8rank/worker{rank}_step_12.*.pt.trace.json.gz" \
  -n 2 -w 1 --db "$db" --json "$tmp/replay.json"
validate replay.v1.schema.json "$tmp/replay.json" doc
# A prediction: its document, and the run it stores (world kind "predicted") in the exports below.
expect 0 "$cb" predict allreduce --log "2x8:$src/tests/data/scaling/gj-aion-h100-ib400-2nodes.txt" \
  --log "4x8:$src/tests/data/scaling/gj-aion-h100-ib400-4nodes.txt" --nvls --nodes 8 \
  --measured "$src/tests/data/scaling/gj-aion-h100-ib400-8nodes.txt" --db "$db" --json "$tmp/predict.json"
validate predict.v1.schema.json "$tmp/predict.json" doc

for what in runs results samples; do
  schema=$what.v1.schema.json
  [ "$what" = runs ] && schema=run.v1.schema.json
  [ "$what" = results ] && schema=result.v1.schema.json
  for format in json jsonl; do
    extra=()
    [ "$what" = samples ] && extra=(--per-rank)
    expect 0 "$cb" export "$what" --db "$db" --format "$format" "${extra[@]}" -o "$tmp/$what.$format"
    kind=array
    [ "$format" = jsonl ] && kind=lines
    validate "$schema" "$tmp/$what.$format" "$kind"
  done
done

# The schemas do reject: a run whose world_size is text, a result without its status.
python3 - "$tmp/runs.json" "$tmp/results.json" >"$tmp/bad.jsonl" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))[0]
run["world_size"] = "2"
result = json.load(open(sys.argv[2]))[0]
del result["status"]
print(json.dumps(run))
print(json.dumps(result))
PY
head -n 1 "$tmp/bad.jsonl" >"$tmp/bad_run.jsonl"
tail -n 1 "$tmp/bad.jsonl" >"$tmp/bad_result.jsonl"
failures_before=$failures
validate run.v1.schema.json "$tmp/bad_run.jsonl" lines >/dev/null 2>&1
validate result.v1.schema.json "$tmp/bad_result.jsonl" lines >/dev/null 2>&1
[ "$failures" -eq $((failures_before + 2)) ] || { echo "FAIL: a schema accepted a bad document"; exit 1; }
failures=$failures_before

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "json schemas: ok"
