#!/bin/bash
# The README's curl walk-through against `thotqen serve` on the embedded defaults (no keys), a real PDF:
#   evals/walkthrough.sh   (PDF=path to use another file; THOTQEN_HOME is /tmp/thq-walk, wiped first)
set -u
cd "$(dirname "$0")/.."
export THOTQEN_HOME=/tmp/thq-walk
rm -rf $THOTQEN_HOME
for k in $(env | grep -E '_API_KEY|DATABASE_URL|LLM_ORDER' | cut -d= -f1); do unset $k; done
.venv/bin/thotqen serve --port 8765 > /tmp/walk-server.log 2>&1 &
SERVER=$!
API=http://127.0.0.1:8765
for i in $(seq 120); do curl -sf $API/api/health >/dev/null && break; sleep 1; done
curl -s $API/api/health; echo
curl -s -X POST $API/api/auth/signup -H 'Content-Type: application/json' -d '{"username": "ann", "password": "a long passphrase"}' > /tmp/walk-signup.json
cat /tmp/walk-signup.json | cut -c1-80; echo
TOKEN=$(python3 -c 'import json; print(json.load(open("/tmp/walk-signup.json"))["access_token"])')
curl -s -X POST $API/api/documents -H "Authorization: Bearer $TOKEN" -F file=@"${PDF:-../shared/eval/financebench/pdfs/AMCOR_2023Q4_EARNINGS.pdf}" > /tmp/walk-up.json
cat /tmp/walk-up.json; echo
JOB=$(python3 -c 'import json; print(json.load(open("/tmp/walk-up.json"))["job_id"])')
curl -sN $API/api/jobs/$JOB/events -H "Authorization: Bearer $TOKEN" | grep -E "^event|^data" | sed -n '1,4p;$p'
CHAT=$(curl -s -X POST $API/api/chats -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"title": "Amcor"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo chat $CHAT
time curl -sN -X POST $API/api/chats/$CHAT/messages -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"question": "What was Amcor adjusted EBITDA for fiscal 2023?"}' > /tmp/walk-answer.txt
grep -E "^event" /tmp/walk-answer.txt | sort | uniq -c
grep -A1 "^event: done" /tmp/walk-answer.txt | cut -c1-600
curl -s $API/api/chats/$CHAT -H "Authorization: Bearer $TOKEN" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([(m["role"], m["content"][:120], [(c["name"], c["page"]) for c in m.get("citations") or []]) for m in d["messages"]])'
kill $SERVER; wait $SERVER 2>/dev/null
