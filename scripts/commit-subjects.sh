#!/usr/bin/env bash
# Every commit subject since the rule began is a summary of 72 characters
# or fewer (CONTRIBUTING.md). Commits made before it are left as they are.
#   scripts/commit-subjects.sh            checks RULE_START..HEAD
set -euo pipefail
cd "$(dirname "$0")/.."
# The last commit before the rule; everything after it is checked.
rule_start=273e4c670d2dc8597c89c9422c1b593be3a2a591
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "commit-subjects.sh: not a git checkout; nothing to check"
  exit 0
fi
if ! git cat-file -e "$rule_start^{commit}" 2>/dev/null; then
  echo "commit-subjects.sh: history before $rule_start is not here (a shallow clone?); nothing to check"
  exit 0
fi
# Characters, not bytes (a subject may hold µ or ≤).
bad=$(git log --format='%h %s' "$rule_start..HEAD" | python3 -c '
import sys
for line in sys.stdin.buffer.read().decode("utf-8").splitlines():
    subject = line.split(" ", 1)[1] if " " in line else ""
    if len(subject) > 72:
        print("%d characters: %s" % (len(subject), line))
')
count=$(git rev-list --count "$rule_start..HEAD")
if [ -n "$bad" ]; then
  echo "commit subjects over 72 characters (put figures and details in the body):"
  echo "$bad"
  exit 1
fi
echo "commit subjects: $count checked, all 72 characters or fewer"
