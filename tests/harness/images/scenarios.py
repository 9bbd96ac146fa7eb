"""Scenario scripts: one well-behaved detector and the hostile ones the sandbox must contain."""

# Reads the public items and writes one prediction per item; also reports what the sandbox looks
# like from inside so tests can check the restrictions themselves.
GOOD = r"""
set -e
n=0
while IFS= read -r line; do
  id=$(echo "$line" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
  echo "{\"id\": \"$id\", \"score\": 0.5}" >> /output/predictions.jsonl
  n=$((n+1))
done < /input/items.jsonl
{
  echo "uid=$(id -u) gid=$(id -g)"
  grep -E '^(CapEff|NoNewPrivs)' /proc/self/status
  echo "env=$LB_BENCHMARK/$LB_SPLIT/$LB_INPUT/$LB_OUTPUT/$HOME"
  echo "net=$(cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' | tr '\n' ,)"
  echo "nofile=$(ulimit -n)"
} > /tmp/report
cat /tmp/report
echo "wrote $n predictions"
"""

SLEEP_FOREVER = "sleep 100000\n"

FORK_BOMB = "bomb() { bomb | bomb & }; bomb\nsleep 100000\n"

# Doubling a shell string reaches any memory cap within a few dozen steps.
MEMORY_BOMB = 'x=aaaaaaaaaaaaaaaa\nwhile true; do x="$x$x"; done\n'

FILL_TMP = "dd if=/dev/zero of=/tmp/fill bs=1M count=1024\n"

FILL_OUTPUT = "i=0\nwhile true; do dd if=/dev/zero of=/output/f$i bs=1M count=4 2>/dev/null; i=$((i+1)); done\n"

STDOUT_FLOOD = (
    "head -c 20000000 /dev/zero | tr '\\0' x\necho\necho END-OF-FLOOD\n"
    "echo '{\"id\": \"a\", \"score\": 0.1}' > /output/predictions.jsonl\n"
)

# Issue 36: about 3 MB of identical 100-byte lines (as `yes` writes). Docker's json-file log
# rotates (its per-line overhead fills 1 MiB files fast) and what it retains starts like the log's
# own beginning, so only a record that knows how much was written can say it was cut.
LINE_FLOOD = (
    "echo FIRST-LINE\nyes " + "x" * 99 + " | head -c 3000000\necho END-OF-FLOOD\n"
    "echo '{\"id\": \"a\", \"score\": 0.1}' > /output/predictions.jsonl\n"
)

NETWORK = r"""
echo "interfaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ,)"
if echo GET | nc -w 2 1.1.1.1 80 >/dev/null 2>&1; then echo "tcp=reached"; else echo "tcp=failed"; fi
echo '{"id": "a", "score": 0.1}' > /output/predictions.jsonl
"""

READ_ONLY = r"""
for p in /etc/x /x /input/x /bin/x /entry.sh; do
  if touch "$p" 2>/dev/null; then echo "wrote $p"; else echo "denied $p"; fi
done
echo '{"id": "a", "score": 0.1}' > /output/predictions.jsonl
"""

# Searches everything it can see for a labels file and writes what it found as "predictions".
LOOK_FOR_LABELS = r"""
echo FOUND-START
find / -name 'labels*' 2>/dev/null | grep -v -E '^/(proc|sys)/' || true
find /input /tmp /output 2>/dev/null || true
echo FOUND-END
echo '{"id": "a", "score": 0.1}' > /output/predictions.jsonl
"""

SYMLINK_OUT = "ln -s /etc/passwd /output/predictions.jsonl\n"

FIFO_OUT = "mkfifo /output/predictions.jsonl\n"

EXIT_3 = "echo failing on purpose >&2\nexit 3\n"

MALFORMED = "echo 'this is not json' > /output/predictions.jsonl\n"

QUICK = "echo '{\"id\": \"a\", \"score\": 0.1}' > /output/predictions.jsonl\n"

SCENARIOS = {name.lower(): value for name, value in dict(globals()).items() if name.isupper() and isinstance(value, str)}
