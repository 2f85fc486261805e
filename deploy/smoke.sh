#!/usr/bin/env bash
# Smoke test of the Docker deployment, for a machine with Docker Engine, Compose 2.24 or later
# and python3: builds the image from this checkout, brings up the single service, then the
# "scale" profile (Redis, three replicas, nginx), and checks each: health, 401 without the
# token, a web_search answered, a repeat answered from the cache (on every replica, with the
# engine asked once), searches that go on while a replica is killed (none may fail or take 1.5 s),
# then tears everything down. The only engine is a fake SearXNG
# (deploy/fake_searxng.py) in a container of its own: nothing but the build needs the internet.
#
#   deploy/smoke.sh                 # SMOKE_PORT (18338) is the published port it uses
#
# It runs as its own Compose project (websearch-mcp-smoke) and ignores .env. The scale profile's
# network is the one compose.yaml fixes (10.238.38.0/24): stop a running scale deployment first.
set -euo pipefail
cd "$(dirname "$0")/.."

PROJECT=websearch-mcp-smoke
export PUBLISH_ADDRESS=127.0.0.1 PUBLISH_PORT="${SMOKE_PORT:-18338}"
SMOKE_TOKEN="smoke-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export SMOKE_TOKEN
BASE="http://127.0.0.1:${PUBLISH_PORT}"

compose() { docker compose -p "$PROJECT" -f compose.yaml -f deploy/smoke.compose.yaml "$@"; }
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; compose --profile scale logs --tail 30 >&2 || true; exit 1; }
teardown() { compose --profile scale down --volumes --remove-orphans >/dev/null 2>&1 || true; }
trap teardown EXIT

status_of() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
search() { python3 deploy/smoke_call.py "$BASE" "$SMOKE_TOKEN" "$1"; }
searches_made() {
  compose exec -T fake-searxng python -c \
    'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:8080/count").read().decode())'
}

check_service() {
  local query="$1" answer
  [ "$(status_of "$BASE/healthz")" = 200 ] || fail "/healthz is not 200"
  [ "$(status_of -X POST "$BASE/mcp")" = 401 ] || fail "/mcp without a token is not 401"
  answer=$(search "$query") || fail "web_search failed"
  echo "first:  $answer"
  case "$answer" in
    cached=false*searxng:ok* | cached=false*searxng:irrelevant*) ;;
    *) fail "not a fresh answer from the fake engine" ;;
  esac
  answer=$(search "$query") || fail "the repeat failed"
  echo "repeat: $answer"
  case "$answer" in cached=true*) ;; *) fail "the repeat was not answered from the cache" ;; esac
}

version=$(docker compose version --short | sed 's/^v//; s/-.*//')
printf '2.24.0\n%s\n' "$version" | sort -V -C \
  || fail "Compose $version is older than 2.24 (compose.yaml's env_file form needs 2.24)"

step "build the image"
compose build websearch
docker run --rm --entrypoint python websearch-mcp:latest -c "import pip" 2>/dev/null \
  && fail "the image ships pip"
docker run --rm --entrypoint python websearch-mcp:latest -c "import setuptools" 2>/dev/null \
  && fail "the image ships setuptools"

step "single service"
compose up -d --wait
check_service "smoke single service"
teardown

step "scale profile: Redis, three replicas, nginx"
compose --profile scale up -d --wait --scale websearch=0
query="smoke across replicas"
check_service "$query"
replicas=$(compose ps -q websearch-replica | wc -l)
[ "$replicas" -ge 2 ] || fail "only $replicas replica(s) running"
for index in $(seq 1 "$replicas"); do
  answer=$(compose exec -T --index "$index" websearch-replica \
    python - http://127.0.0.1:8338 "$SMOKE_TOKEN" "$query" < deploy/smoke_call.py) \
    || fail "web_search on replica $index failed"
  echo "replica $index: $answer"
  case "$answer" in cached=true*) ;; *) fail "replica $index did not answer from the cache" ;; esac
done
made=$(searches_made)
echo "engine: $made"
case "$made" in *'"searches": 1}'*) ;; *) fail "the engine was asked more than once" ;; esac

step "losing a replica: docker kill of one while searches go on through nginx"
victim=$(compose ps -q websearch-replica | head -n 1)
python3 deploy/smoke_failover.py "$BASE" "$SMOKE_TOKEN" 20 1.5 -- docker kill "$victim" \
  || fail "a search failed, or took 1.5 s or more, while a replica was killed"

step "tear down"
teardown
trap - EXIT
echo "smoke test passed"
