#!/usr/bin/env bats
# Project configuration end to end: .litterbox.toml and .litterbox.local.toml
# read from the working tree at create time, refused files, named ports on
# 127.0.0.1, services (start, stop, restart, status, logs; across pause,
# resume and a stopped container), the per-sandbox network and the limits.
# README "Configuration".

# shellcheck disable=SC2154,SC2153,SC2030,SC2031,SC2016 # bats sets status/output/lines/stderr; REPO and REPO_SLUG come from common_setup; each test is a subshell; scripts in single quotes run in the container
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers; }
setup() { common_setup; }
teardown() {
  common_teardown
  local n
  for n in "${NETWORKS[@]}"; do
    "$RUNTIME" network rm "$n" >/dev/null 2>&1 || true
  done
}

# Docker networks a test made; teardown removes them after the containers.
NETWORKS=()

# The busybox httpd service most tests use: /src on container port 8080.
HTTPD='["busybox", "httpd", "-f", "-p", "8080", "-h", "/src"]'

# config [FILE] writes the repository's config file (default .litterbox.toml)
# from stdin, in the working tree only.
# The committed file is trusted as written (the trust rules have tests of
# their own, in trust.bats); a file that does not load is left untrusted.
config() {
  cat >"$REPO/${1:-.litterbox.toml}"
  if [ "${1:-.litterbox.toml}" = .litterbox.toml ]; then
    lb trust >/dev/null 2>&1 || true
  fi
}

# commit_config commits .litterbox.toml, so create sees a clean work tree.
commit_config() {
  git add .litterbox.toml
  git commit -qm "config"
}

# use_project_slug sets PROJECT_SLUG, unique to this test, and has teardown
# remove what is named after it (containers litterbox-<slug>-*, volumes).
use_project_slug() {
  PROJECT_SLUG="${REPO_SLUG}-p"
  REPOS+=("$REPO")
  REPO_SLUGS+=("$PROJECT_SLUG")
}

# host_port NAME [INDEX] prints the host port of NAME's INDEXth port (0).
host_port() { lb_ok ports "$1" --json | jsonget ".${2:-0}.host_port"; }

# fetch URL prints the body once the server answers (trying for 5 s).
fetch() {
  local i
  for ((i = 0; i < 50; i++)); do
    curl -fsS --max-time 2 "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  curl -fsS --max-time 2 "$1"
}

# ip_of CONTAINER prints its address on its (one) network.
ip_of() { inspect "$1" '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}'; }

# box_get NAME IP PORT sends GET /index.html to IP:PORT from inside sandbox
# NAME and prints the response. (busybox nc: Debian's static busybox wget
# crashes in containers.)
box_get() {
  lb exec "$1" -- sh -c 'printf "GET /index.html HTTP/1.0\r\n\r\n" | nc -w 3 "$1" "$2"' sh "$2" "$3" </dev/null
}

# service_pid NAME SERVICE prints the service's pid from status --json.
service_pid() { lb_ok service "$1" status "$2" --json | jsonget .0.pid; }

# assert_nothing_created NAME [SLUG]: no branch, container, volume or state
# of sandbox NAME (or of any sandbox of this repository) exists. Setup cache
# volumes (litterbox-SLUG-ID.cache-KEY) and base trees (.base-KEY) are the
# repository's, kept past a delete on purpose: they do not count.
assert_nothing_created() {
  local slug=${2:-$REPO_SLUG}
  assert_equal "$(git branch --list "litterbox/$1")" ""
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  container_exists "$(container_of "$1" "$slug")" && fail "container $(container_of "$1" "$slug") exists"
  assert_equal "$("$RUNTIME" volume ls -q | grep -F "litterbox-$slug-" | grep -vF -e .cache- -e .base- || true)" ""
  assert_file_not_exist "$(git rev-parse --path-format=absolute --git-common-dir)/litterbox/sandboxes/$1.json"
  assert_equal "$(litterbox_names)" ""
}

# refused PATTERN: `create box` with the current config files exits 1 with one
# line on stderr matching the extended regex PATTERN, and makes nothing.
refused() {
  run --separate-stderr lb create box
  refute_hang
  assert_failure 1
  assert_output ""
  [ "${#stderr_lines[@]}" -eq 1 ] || fail "want a one-line error, got: $stderr"
  [[ $stderr =~ $1 ]] || fail "error does not match /$1/: $stderr"
  assert_nothing_created box
}

# ---------------------------------------------------------------------------
# Ports and the headline service

@test "ports: an httpd service serves /src on its named host port, on 127.0.0.1 only" {
  config <<EOF
[docker]
setup-command = "echo ready"
[[ports]]
name = "www"
target = 8080
[container.services.web]
command = $HTTPD
EOF
  commit_config
  commit_file index.html "served by litterbox"

  run --separate-stderr lb create web
  assert_success
  refute_stderr --partial Warning
  assert_line "  config:    .litterbox.toml"
  assert_line "  network:   bridge"
  assert_line "  setup:     echo ready (exit 0)"
  assert_line --regexp '^  service:   web: running \(pid [0-9]+\)$'
  port=$(host_port web)
  [[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 3000 ] && [ "$port" -le 8000 ] || fail "host port '$port' is not in 3000-8000"
  assert_line "  port:      www http://127.0.0.1:$port -> 8080 (LITTERBOX_FWD_PORT_WWW, PORT_WWW)"

  run fetch "http://127.0.0.1:$port/index.html"
  assert_success
  assert_output "served by litterbox"

  # Published on the loopback address only.
  c=$(container_of web)
  assert_equal "$(inspect "$c" '{{json .HostConfig.PortBindings}}')" "{\"8080/tcp\":[{\"HostIp\":\"127.0.0.1\",\"HostPort\":\"$port\"}]}"
  for ip in $(hostname -I); do
    [[ $ip == *.*.*.* && $ip != 127.* ]] || continue
    run curl -fsS --max-time 2 "http://$ip:$port/index.html"
    assert_failure
  done

  # The port variables inside the sandbox hold the host port.
  run lb exec web -- sh -c 'echo "$PORT_WWW $LITTERBOX_FWD_PORT_WWW"' </dev/null
  assert_success
  assert_output "$port $port"

  # ports, ports --json, list and list --json show the map.
  run lb ports web
  assert_success
  assert_line --index 0 --regexp '^NAME +ADDRESS +CONTAINER PORT +ENV$'
  assert_line --index 1 --regexp "^www +http://127\.0\.0\.1:$port +8080 +LITTERBOX_FWD_PORT_WWW PORT_WWW\$"
  run lb ports web --json
  assert_success
  assert_equal "$(jsonget '.#' .0.name .0.container_port .0.host_port '.0.env.*' .0.address <<<"$output")" \
    "$(printf '%s\n' 1 www 8080 "$port" LITTERBOX_FWD_PORT_WWW PORT_WWW "127.0.0.1:$port")"
  run lb list
  assert_success
  assert_line --index 0 --regexp '^NAME +STATUS +OWNER +AGE +IDLE +BRANCH +AHEAD +PORTS$'
  assert_line --index 1 --regexp "^web +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/web +0 +www=$port\$"
  run lb list --json
  assert_success
  assert_equal "$(jsonget .0.container <<<"$output")" "$c"
  assert_equal "$(jsonget '.0.ports.#' .0.ports.0.name .0.ports.0.host_port .0.ports.0.container_port <<<"$output")" \
    "$(printf '%s\n' 1 www "$port" 8080)"
}

@test "ports: two sandboxes with the same target get different host ports and both serve their own /src" {
  config <<EOF
[[ports]]
name = "www"
target = 8080
[container.services.web]
command = $HTTPD
EOF
  commit_config
  create alpha
  create beta
  pa=$(host_port alpha)
  pb=$(host_port beta)
  [ -n "$pa" ] && [ -n "$pb" ] || fail "no host ports: '$pa' '$pb'"
  [ "$pa" != "$pb" ] || fail "both sandboxes got host port $pa"

  lb_ok exec alpha -- sh -c 'echo alpha >index.html' </dev/null >/dev/null
  lb_ok exec beta -- sh -c 'echo beta >index.html' </dev/null >/dev/null
  run fetch "http://127.0.0.1:$pa/index.html"
  assert_success
  assert_output alpha
  run fetch "http://127.0.0.1:$pb/index.html"
  assert_success
  assert_output beta

  assert_equal "$(lb_ok exec beta -- sh -c 'echo $PORT_WWW' </dev/null)" "$pb"
  run lb list
  assert_success
  assert_line --regexp "^alpha +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/alpha +1 +www=$pa\$"
  assert_line --regexp "^beta +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/beta +1 +www=$pb\$"
}

@test "create --json: setup, ports (env names from port names), services, network, workdir, config files, warnings" {
  config <<EOF
[docker]
setup-command = "echo json"
[[ports]]
name = "web-ui"
target = 8080
[[ports]]
name = "my.api"
target = 9000
[container.services.web]
command = $HTTPD
EOF
  printf '[docker]\nenv = { FROM_LOCAL = "yes" }\n' | config .litterbox.local.toml
  head=$(git rev-parse HEAD)

  run --separate-stderr lb create --json box
  assert_success
  json=$output
  keys=$(jsonget .@keys <<<"$json")
  for k in name branch container base status setup ports services network workdir config_files warnings; do
    [[ " $keys " == *" $k "* ]] || fail "create --json has no '$k': $keys"
  done
  assert_equal "$(jsonget .name .branch .container .base .status .network .workdir <<<"$json")" \
    "$(printf '%s\n' box litterbox/box "$(container_of box)" "$head" active bridge /src)"
  assert_equal "$(jsonget '.config_files.*' <<<"$json")" "$(printf '.litterbox.toml\n.litterbox.local.toml')"
  assert_equal "$(jsonget .setup.command .setup.exit_code .setup.stdout .setup.stderr <<<"$json")" \
    "$(printf '%s\n' "echo json" 0 json "")"
  # .litterbox.toml is not committed: the warning says so. The local
  # config is the person's own, never the sandbox's, and does not count.
  assert_equal "$(jsonget '.warnings.#' <<<"$json")" 1
  [[ $(jsonget .warnings.0 <<<"$json") == *"uncommitted change(s)"* ]] || fail "warnings: $(jsonget .warnings <<<"$json")"
  assert_stderr --partial "Warning: 1 uncommitted change(s)"

  assert_equal "$(jsonget '.ports.#' .ports.0.name .ports.0.container_port '.ports.0.env.*' .ports.1.name .ports.1.container_port '.ports.1.env.*' <<<"$json")" \
    "$(printf '%s\n' 2 web-ui 8080 LITTERBOX_FWD_PORT_WEB_UI PORT_WEB_UI my.api 9000 LITTERBOX_FWD_PORT_MY_API PORT_MY_API)"
  p0=$(jsonget .ports.0.host_port <<<"$json")
  p1=$(jsonget .ports.1.host_port <<<"$json")
  [ "$p0" != "$p1" ] || fail "two ports of one sandbox share host port $p0"
  assert_equal "$(jsonget .ports.0.address .ports.1.address <<<"$json")" "$(printf '127.0.0.1:%s\n' "$p0" "$p1")"

  assert_equal "$(jsonget '.services.#' .services.0.name .services.0.state .services.0.log '.services.0.command.*' <<<"$json")" \
    "$(printf '%s\n' 1 web running /tmp/litterbox/services/web.log busybox httpd -f -p 8080 -h /src)"
  [[ $(jsonget .services.0.pid <<<"$json") =~ ^[1-9][0-9]*$ ]] || fail "service pid: $(jsonget .services.0 <<<"$json")"

  run lb exec box -- sh -c 'echo "$PORT_WEB_UI $LITTERBOX_FWD_PORT_MY_API $PORT_MY_API $FROM_LOCAL"' </dev/null
  assert_success
  assert_output "$p0 $p1 $p1 yes"
}

@test "ports: a Rust-Litterbox .litterbox.toml ([project], [docker] image/setup-command, [[ports]]) works unchanged" {
  use_project_slug
  config <<EOF
[project]
slug = "$PROJECT_SLUG"

[docker]
image = "busybox:latest"
setup-command = "echo rust-era"

[[ports]]
name = "backend"
target = 3000

[[ports]]
name = "frontend"
target = 5173
EOF
  commit_config

  run --separate-stderr lb create old
  assert_success
  c=$(container_of old "$PROJECT_SLUG")
  assert_line "Created sandbox 'old'"
  assert_line "  container: $c"
  assert_line "  network:   bridge"
  assert_line "    rust-era"
  assert_line --partial "  cache:     not kept: the setup command left no file where the cache keeps them"
  pb=$(host_port old 0)
  pf=$(host_port old 1)
  assert_line "  port:      backend http://127.0.0.1:$pb -> 3000 (LITTERBOX_FWD_PORT_BACKEND, PORT_BACKEND)"
  assert_line "  port:      frontend http://127.0.0.1:$pf -> 5173 (LITTERBOX_FWD_PORT_FRONTEND, PORT_FRONTEND)"

  assert_equal "$(state_of "$c")" running
  assert_equal "$(inspect "$c" '{{.HostConfig.NetworkMode}}')" bridge
  volume_exists "$(volume_of old "$PROJECT_SLUG")" || fail "no volume $(volume_of old "$PROJECT_SLUG")"
  run lb list
  assert_success
  assert_line --regexp "^old +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/old +0 +backend=$pb,frontend=$pf\$"
  assert_equal "$(lb_ok list --json | jsonget '.[name=old].container')" "$c"
  assert_equal "$(lb_ok exec old -- sh -c 'echo $PORT_BACKEND $PORT_FRONTEND' </dev/null)" "$pb $pf"

  lb_ok delete --force old >/dev/null
  container_exists "$c" && fail "container $c is left"
  volume_exists "$(volume_of old "$PROJECT_SLUG")" && fail "volume $(volume_of old "$PROJECT_SLUG") is left"
  assert_nothing_created old "$PROJECT_SLUG"
  # Its setup leaves nothing the cache keeps, so none is made (and create
  # said so).
  assert_equal "$(lb_ok cache ls --json | jsonget '.#')" 0
}

# ---------------------------------------------------------------------------
# Services

@test "service: status, stop, start, restart (signal keeps the pid, stop+start makes a new one) and logs" {
  config <<EOF
[[ports]]
name = "www"
target = 8080
[container.services.web]
command = $HTTPD
signals = { stop = "SIGTERM", restart = "SIGHUP" }
[container.services.ticker]
command = "echo started; exec sleep 300"
EOF
  commit_config
  commit_file index.html "svc"
  create svc
  port=$(host_port svc)
  run fetch "http://127.0.0.1:$port/index.html"
  assert_output svc

  # status without a service lists them all, by name.
  run --separate-stderr lb service svc status
  assert_success
  assert_equal "${#lines[@]}" 2
  assert_line --index 0 --regexp '^ticker: running \(pid [0-9]+\)$'
  assert_line --index 1 --regexp '^web: running \(pid [0-9]+\)$'
  web_pid=$(service_pid svc web)
  ticker_pid=$(service_pid svc ticker)
  run lb service svc status web
  assert_success
  assert_output "web: running (pid $web_pid)"
  run lb service svc status web --json
  assert_success
  assert_equal "$(jsonget '.#' .0.name .0.state .0.pid .0.log <<<"$output")" \
    "$(printf '%s\n' 1 web running "$web_pid" /tmp/litterbox/services/web.log)"

  # restart with a restart signal: signalled, same pid, still serving.
  run lb service svc restart web
  assert_success
  assert_output "web: running (pid $web_pid)"
  run fetch "http://127.0.0.1:$port/index.html"
  assert_output svc

  # restart without one: stop and start, a new pid.
  run lb service svc restart ticker
  assert_success
  assert_output --regexp '^ticker: running \(pid [0-9]+\)$'
  new_ticker=$(service_pid svc ticker)
  [ "$new_ticker" != "$ticker_pid" ] || fail "restart without a restart signal kept pid $ticker_pid"

  # stop: SIGTERM, exit code 143; the port stops answering.
  run lb service svc stop web
  assert_success
  assert_output "web: stopped (exit code 143)"
  run lb service svc status web
  assert_output "web: stopped (exit code 143)"
  run curl -fsS --max-time 2 "http://127.0.0.1:$port/index.html"
  assert_failure
  run lb service svc start web
  assert_success
  assert_output --regexp '^web: running \(pid [0-9]+\)$'
  [ "$(service_pid svc web)" != "$web_pid" ] || fail "start reused pid $web_pid"
  run fetch "http://127.0.0.1:$port/index.html"
  assert_output svc
  # start of a running service leaves it alone.
  pid=$(service_pid svc web)
  run lb service svc start web
  assert_output "web: running (pid $pid)"

  # logs: the whole log, -n N its end; the same file is in the sandbox.
  run --separate-stderr lb service svc logs ticker
  assert_success
  assert_equal "$(grep -c '^started$' <<<"$output")" 2
  assert_equal "$(grep -c '^--- litterbox: starting ticker' <<<"$output")" 2
  log=$output
  run lb exec svc -- cat /tmp/litterbox/services/ticker.log </dev/null
  assert_success
  assert_output "$log"
  run lb service svc logs ticker -n 1
  assert_success
  assert_output started
}

@test "service logs: escape sequences a service prints reach the terminal as text; --raw prints them" {
  config <<'EOF'
[container.services.noisy]
command = "printf '\\033]52;c;aGk=\\007\\033[2Jnoisy\\n'; exec sleep 300"
EOF
  commit_config
  create box
  eventually sh -c "\"\$LITTERBOX\" service box logs noisy --raw | grep -q noisy"
  run --separate-stderr lb service box logs noisy
  assert_success
  assert_output --partial '\x1b]52;c;aGk=\x07\x1b[2Jnoisy'
  if printf '%s' "$output" | grep -q "$(printf '\033')"; then fail "logs printed an ESC byte: $output"; fi
  run --separate-stderr lb service box logs noisy --raw
  assert_success
  assert_output --partial "$(printf '\033]52;c;aGk=\007\033[2Jnoisy')"
}

@test "service: an unknown service fails with exit 1 and one line; an unknown action or a missing service is bad usage (exit 2)" {
  config <<'EOF'
[container.services.ticker]
command = ["sleep", "300"]
EOF
  commit_config
  create svc
  run --separate-stderr lb service svc status nope
  assert_failure 1
  assert_output ""
  assert_equal "${#stderr_lines[@]}" 1
  assert_stderr --regexp "^Error: Sandbox 'svc' has no service \"nope\" \(it has: ticker"
  run --separate-stderr lb service svc start nope
  assert_failure 1
  assert_equal "${#stderr_lines[@]}" 1
  run --separate-stderr lb service svc logs nope
  assert_failure 1
  assert_equal "${#stderr_lines[@]}" 1
  assert_stderr --partial 'no service "nope"'
  # A wrong action or a missing service is bad usage (exit 2).
  run --separate-stderr lb service svc bogus ticker
  assert_failure 2
  assert_output ""
  assert_equal "${#stderr_lines[@]}" 1
  assert_stderr --regexp '^Error: service: unknown action "bogus"'
  run --separate-stderr lb service svc stop
  assert_failure 2
  assert_equal "${#stderr_lines[@]}" 1
  assert_stderr --partial "name the service (litterbox service svc status lists them)"
  run --separate-stderr lb service svc logs
  assert_failure 2
  assert_equal "${#stderr_lines[@]}" 1
  run --separate-stderr lb service nosuchbox status
  assert_failure 1
  assert_equal "$stderr" "$(not_found nosuchbox svc)"
  # Nothing of that touched the service.
  run lb service svc status
  assert_output --regexp '^ticker: running \(pid [0-9]+\)$'
}

@test "service: runs as the sandbox user in /src with the env table and the port variables" {
  config <<'EOF'
[docker]
env = { RUST_LOG = "debug" }
[[ports]]
name = "my.api"
target = 9000
[container.services.envy]
command = "echo \"$PORT_MY_API $LITTERBOX_FWD_PORT_MY_API $RUST_LOG $LITTERBOX_SANDBOX $HOME $(pwd) $(id -u):$(id -g)\"; exec sleep 300"
EOF
  commit_config
  create envy
  port=$(host_port envy)
  eventually sh -c "\"\$LITTERBOX\" service envy logs envy | grep -q debug"
  run lb service envy logs envy -n 1
  assert_success
  assert_output "$port $port debug envy /home/litterbox /src 1000:1000"
}

@test "service: stop sends SIGKILL to a service that ignores the stop signal after stop-timeout" {
  config <<'EOF'
[container.services.stubborn]
command = "trap '' TERM; echo up; while :; do sleep 1; done"
stop-timeout = 1
EOF
  commit_config
  create box
  eventually sh -c "\"\$LITTERBOX\" service box logs stubborn | grep -q up"
  pgid=$(service_pid box stubborn)
  start=$(date +%s%N)
  run lb service box stop stubborn
  took=$((($(date +%s%N) - start) / 1000000))
  assert_success
  assert_output "stubborn: stopped (exit code 137)"
  [ "$took" -ge 900 ] || fail "stop took ${took}ms: it did not wait the 1 s stop-timeout"
  [ "$took" -lt 6000 ] || fail "stop took ${took}ms: stop-timeout = 1 was not used"
  # The whole process group is gone, the loop's sleep included.
  run lb exec box -- sh -c 'ps -o pgid,args | awk -v g="$1" "\$1 == g" | wc -l' sh "$pgid" </dev/null
  assert_success
  assert_output 0
}

@test "service: the configured stop signal SIGINT ends the service (exit code 130), without waiting for SIGKILL" {
  config <<'EOF'
[container.services.sleeper]
command = ["sleep", "300"]
signals = { stop = "SIGINT" }
stop-timeout = 3
EOF
  commit_config
  create box
  run lb service box status sleeper
  assert_output --regexp '^sleeper: running'
  start=$(date +%s%N)
  run lb service box stop sleeper
  took=$((($(date +%s%N) - start) / 1000000))
  assert_success
  # sleep's default action on SIGINT is to end: 128 + 2.
  assert_output "sleeper: stopped (exit code 130)"
  [ "$took" -lt 2500 ] || fail "stop took ${took}ms: SIGINT did not end the service, the stop-timeout SIGKILL did"
}

@test "service: a service that exits at once is reported exited with its code and log; create warns but succeeds" {
  config <<'EOF'
[container.services.bad]
command = "echo boom >&2; exit 4"
[container.services.good]
command = ["sleep", "300"]
EOF
  commit_config
  run --separate-stderr lb create box
  assert_success
  assert_line "  service:   bad: exited (exit code 4)"
  assert_line --regexp '^  service:   good: running \(pid [0-9]+\)$'
  assert_stderr --partial 'Warning: services: service "bad" is exited (exit code 4): boom'
  assert_equal "$(list_status box)" active
  run lb service box status bad
  assert_success
  assert_output "bad: exited (exit code 4)"
  run lb service box logs bad
  assert_line boom
  run --separate-stderr lb service box start bad
  assert_failure 1
  assert_equal "$stderr" 'Error: Service "bad" is exited (exit code 4): boom.'
}

@test "service: services keep running across pause and resume (same pid, still serving)" {
  config <<EOF
[[ports]]
name = "www"
target = 8080
[container.services.web]
command = $HTTPD
EOF
  commit_config
  commit_file index.html "paused and back"
  create box
  port=$(host_port box)
  run fetch "http://127.0.0.1:$port/index.html"
  assert_output "paused and back"
  pid=$(service_pid box web)

  lb_ok pause box >/dev/null
  assert_equal "$(list_status box)" paused
  run curl -fsS --max-time 1 "http://127.0.0.1:$port/index.html"
  assert_failure
  lb_ok resume box >/dev/null
  assert_equal "$(list_status box)" active
  run lb service box status
  assert_success
  assert_output "web: running (pid $pid)"
  run fetch "http://127.0.0.1:$port/index.html"
  assert_success
  assert_output "paused and back"
}

@test "service: after docker stop, list shows stopped and resume starts the container and its services as created" {
  config <<EOF
[[ports]]
name = "www"
target = 8080
[container.services.web]
command = $HTTPD
EOF
  commit_config
  commit_file index.html "back again"
  create box
  port=$(host_port box)
  run fetch "http://127.0.0.1:$port/index.html"
  assert_output "back again"

  "$RUNTIME" stop -t 1 "$(container_of box)" >/dev/null
  assert_equal "$(list_status box)" stopped
  run lb list
  assert_line --regexp "^box +stopped +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/box +0 +www=$port\$"
  # An edit made since does not change the sandbox: it keeps its services.
  config <<'EOF'
[container.services.other]
command = ["sleep", "300"]
EOF

  run --separate-stderr lb resume box
  assert_success
  assert_output "Started stopped sandbox 'box'. Started 1 service(s)."
  assert_equal "$(list_status box)" active
  run lb service box status
  assert_success
  assert_output --regexp '^web: running \(pid [0-9]+\)$'
  run fetch "http://127.0.0.1:$port/index.html"
  assert_success
  assert_output "back again"
  # /tmp is a tmpfs: the log starts afresh with this start.
  run lb service box logs web
  assert_equal "$(grep -c '^--- litterbox: starting web' <<<"$output")" 1
}

# ---------------------------------------------------------------------------
# Setup command and base ref

@test "setup: a failing setup-command from the config keeps the sandbox as failed-setup, starts no service; delete --force removes it" {
  config <<'EOF'
[docker]
setup-command = "echo out; exit 3"
[container.services.ticker]
command = ["sleep", "300"]
EOF
  commit_config
  run --separate-stderr lb create broken
  assert_failure 1
  assert_line "  setup:     echo out; exit 3 (exit 3)"
  assert_line "    out"
  refute_line --partial "service:"
  assert_stderr --partial "exited with code 3"
  assert_stderr --partial "failed-setup"
  assert_equal "$(list_status broken)" failed-setup
  run lb list
  assert_line --regexp '^broken +failed-setup +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/broken '
  run lb service broken status
  assert_success
  assert_output "ticker: not-started"

  c=$(container_of broken)
  container_exists "$c" || fail "the failed-setup sandbox's container is gone"
  run lb delete --force broken
  assert_success
  container_exists "$c" && fail "container $c is left"
  assert_nothing_created broken
}

@test "base: create --base makes the sandbox from that commit's tree with the working tree's config; an unknown ref creates nothing" {
  git tag v1
  v1=$(git rev-parse HEAD)
  config <<'EOF'
[docker]
setup-command = "test -e later.txt && echo has-later || echo no-later; test -e .litterbox.toml && echo has-config || echo no-config"
EOF
  commit_config
  commit_file later.txt "later"

  run --separate-stderr lb create --json old --base v1
  assert_success
  assert_equal "$(jsonget .base .status '.config_files.*' <<<"$output")" "$(printf '%s\n' "$v1" active .litterbox.toml)"
  assert_equal "$(jsonget .setup.stdout <<<"$output")" "$(printf 'no-later\nno-config')"
  assert_equal "$(git rev-parse litterbox/old)" "$v1"
  run lb exec old -- sh -c 'ls -A | sort' </dev/null
  assert_success
  expected=$(git ls-tree --name-only v1 | sort)
  assert_output "$expected"

  # A config that would publish ports; the bad ref still makes nothing.
  config <<'EOF'
[[ports]]
name = "www"
target = 8080
EOF
  run --separate-stderr lb create box --base nosuchref
  assert_failure 1
  assert_output ""
  assert_equal "$stderr" 'Error: Base ref "nosuchref" is not a commit in this repository; use a branch, a tag, HEAD or a commit id reachable from one, optionally followed by ~N or ^N.'
  assert_equal "$(git branch --list litterbox/box)" ""
  container_exists "$(container_of box)" && fail "container made for a bad base"
  assert_equal "$(litterbox_names)" old
}

# ---------------------------------------------------------------------------
# Reading and merging the files

@test "config: uncommitted edits to .litterbox.toml count; the sandbox still holds the commit" {
  config <<<'[docker]
setup-command = "echo committed"'
  commit_config
  config <<<'[docker]
setup-command = "echo edited"'
  run --separate-stderr lb create box
  assert_success
  assert_line "  setup:     echo edited (exit 0)"
  assert_line "    edited"
  assert_stderr --partial "Warning: 1 uncommitted change(s)"
  run lb exec box -- cat .litterbox.toml </dev/null
  assert_output --partial "echo committed"
}

@test "config: .litterbox.local.toml overrides key by key (setup, env by variable, ports by name)" {
  config <<'EOF'
[docker]
setup-command = "echo main"
memory = "512m"
env = { A = "main", B = "main" }
[[ports]]
name = "www"
target = 8080
EOF
  commit_config
  config .litterbox.local.toml <<'EOF'
[docker]
setup-command = "echo local"
env = { B = "local", C = "local" }
[[ports]]
name = "www"
target = 9090
[[ports]]
name = "api"
target = 7000
EOF
  run --separate-stderr lb create box
  assert_success
  assert_line "  config:    .litterbox.toml, .litterbox.local.toml"
  assert_line "  setup:     echo local (exit 0)"
  assert_line "    local"
  refute_line "    main"
  assert_line --regexp '^  port:      www http://127\.0\.0\.1:[0-9]+ -> 9090 '
  assert_line --regexp '^  port:      api http://127\.0\.0\.1:[0-9]+ -> 7000 '
  run lb exec box -- sh -c 'echo "$A $B $C"' </dev/null
  assert_output "main local local"
  # What the local file does not mention keeps the main file's value.
  assert_equal "$(inspect "$(container_of box)" '{{.HostConfig.Memory}}')" 536870912

  # A local file alone is used too.
  rm .litterbox.toml
  run --separate-stderr lb create --json solo
  assert_success
  assert_equal "$(jsonget '.config_files.*' .setup.stdout <<<"$output")" "$(printf '.litterbox.local.toml\nlocal')"
}

@test "config: no config file gives the defaults and says so" {
  run --separate-stderr lb create --json box
  assert_success
  assert_equal "$(jsonget '.config_files.#' '.ports.#' '.services.#' .network .setup.command <<<"$output")" \
    "$(printf '%s\n' 0 0 0 none "echo hello world")"
  run --separate-stderr lb create box2
  assert_success
  assert_line "  config:    defaults (no .litterbox.toml)"
  assert_line "  network:   none"
  refute_line --partial "port:"
  refute_line --partial "service:"
}

# ---------------------------------------------------------------------------
# Refused files: one line naming the file (line, key), and nothing made

@test "refused: a TOML syntax error names the file and line, and the fix" {
  config <<'EOF'
[docker]
image = "busybox:latest"
setup-command = "echo
EOF
  refused '^Error: \.litterbox\.toml, line 3.*; the file is TOML \(https://toml\.io\): fix that line; docs/configuration\.md lists every key\.$'
}

@test "refused: a value of the wrong type names the file, line and key docker.image" {
  config <<'EOF'
[docker]
image = 5
EOF
  refused '^Error: \.litterbox\.toml, line 2, key docker\.image: want a string, got an integer'
}

@test "refused: port target 0 and 70000 are out of range" {
  config <<'EOF'
[[ports]]
name = "www"
target = 0
EOF
  refused '^Error: \.litterbox\.toml, line 3, key ports\.target: port 0 is out of range 1-65535'
  config <<'EOF'
[[ports]]
name = "www"
target = 70000
EOF
  refused '^Error: \.litterbox\.toml, line 3, key ports\.target: port 70000 is out of range 1-65535'
}

@test "refused: two ports whose names give the same variable (web-ui, WEB_UI)" {
  config <<'EOF'
[[ports]]
name = "web-ui"
target = 8080
[[ports]]
name = "WEB_UI"
target = 8081
EOF
  refused '^Error: \.litterbox\.toml, key ports: ports "web-ui" and "WEB_UI" would both set PORT_WEB_UI'
}

@test "refused: an unknown signal (SIGFOO)" {
  config <<'EOF'
[container.services.web]
command = ["sleep", "300"]
signals = { stop = "SIGFOO" }
EOF
  refused '^Error: \.litterbox\.toml, line 3, key container\.services\.web\.signals\.stop: unknown signal "SIGFOO"'
}

@test "refused: a malformed memory size (lots)" {
  config <<'EOF'
[docker]
memory = "lots"
EOF
  refused '^Error: \.litterbox\.toml, line 2, key docker\.memory: memory "lots"'
}

@test "refused: memory = 5 (bytes, below the engine's minimum), cpus = 0 and pids = 2, before anything is made" {
  printf '[docker]\nmemory = 5\n' | config
  refused "^Error: \.litterbox\.toml, line 2, key docker\.memory: memory 5 is 5 bytes, below the engine's minimum of 6m"
  printf '[docker]\ncpus = 0\n' | config
  refused '^Error: \.litterbox\.toml, line 2, key docker\.cpus: cpus 0: want a number of CPUs from 0\.01 up'
  printf '[docker]\npids = 2\n' | config
  refused '^Error: \.litterbox\.toml, line 2, key docker\.pids: pids 2: want at least 16'
}

@test "refused: [[ports]] with network = \"none\" needs a network" {
  config <<'EOF'
[docker]
network = "none"
[[ports]]
name = "www"
target = 8080
EOF
  refused '^Error: \.litterbox\.toml, key docker\.network: port "www" needs a network'
}

@test "refused: errors in or from .litterbox.local.toml name it" {
  config <<'EOF'
[[ports]]
name = "www"
target = 8080
EOF
  commit_config
  config .litterbox.local.toml <<'EOF'
[docker]
setup-command = "x"
network = [
EOF
  refused '^Error: \.litterbox\.local\.toml, line [0-9]+'
  # The local file turns the network off under the main file's ports.
  printf '[docker]\nnetwork = "none"\n' | config .litterbox.local.toml
  refused '^Error: \.litterbox\.toml \+ \.litterbox\.local\.toml, key docker\.network: port "www" needs a network'
}

@test "broken config: list, exec and delete warn on stderr and go on" {
  create box
  printf '[docker\n' | config
  run --separate-stderr lb list
  assert_success
  assert_line --regexp '^box +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/box +0 +-$'
  assert_stderr --regexp "ignoring the config files: \\.litterbox\\.toml, line [0-9]+"
  run --separate-stderr lb list --json
  assert_success
  assert_equal "$(jsonget '.*.name' <<<"$output")" box
  run --separate-stderr lb exec box -- echo still-here </dev/null
  assert_success
  assert_output still-here
  run --separate-stderr lb delete --force box
  assert_success
  assert_nothing_created box
}

@test "broken config: exec and service still reach a sandbox of a project with [project] slug" {
  use_project_slug
  config <<EOF
[project]
slug = "$PROJECT_SLUG"
[container.services.ticker]
command = ["sleep", "300"]
EOF
  commit_config
  create box
  assert_equal "$(state_of "$(container_of box "$PROJECT_SLUG")")" running
  printf '[docker\n' >>.litterbox.toml

  run --separate-stderr lb list
  assert_success
  assert_line --regexp '^box +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/box +0 +-$'
  run --separate-stderr lb list --json
  assert_success
  assert_equal "$(jsonget .0.container <<<"$output")" "$(container_of box "$PROJECT_SLUG")"
  run --separate-stderr lb exec box -- echo still-here </dev/null
  [ "$status" -eq 0 ] || fail "exec exited $status: $stderr"
  assert_output still-here
  run --separate-stderr lb service box status
  [ "$status" -eq 0 ] || fail "service status exited $status: $stderr"
  assert_output --regexp '^ticker: running'
}

@test "broken config: delete --force of a sandbox of a project with [project] slug removes its container and volume" {
  use_project_slug
  config <<EOF
[project]
slug = "$PROJECT_SLUG"
EOF
  commit_config
  create box
  c=$(container_of box "$PROJECT_SLUG")
  v=$(volume_of box "$PROJECT_SLUG")
  container_exists "$c" || fail "no container $c"
  printf '[docker\n' >>.litterbox.toml

  run --separate-stderr lb delete --force box
  assert_success
  assert_line "Deleted sandbox 'box'."
  container_exists "$c" && fail "delete said 'Deleted' but left container $c (and it is still listed: $(litterbox_names))"
  volume_exists "$v" && fail "delete said 'Deleted' but left volume $v"
  assert_nothing_created box "$PROJECT_SLUG"
}

# ---------------------------------------------------------------------------
# Network and limits

@test "network: none (the default) has only lo and cannot reach another sandbox; bridge reaches it" {
  # A server sandbox on the bridge, with no published port.
  config <<EOF
[docker]
network = "bridge"
[container.services.web]
command = $HTTPD
EOF
  commit_config
  commit_file index.html "over the bridge"
  create server
  ip=$(ip_of "$(container_of server)")
  [[ $ip =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "server has no address: '$ip'"

  create client
  assert_equal "$(inspect "$(container_of client)" '{{.HostConfig.NetworkMode}}')" bridge
  run lb exec client -- sh -c 'ls /sys/class/net | sort | tr "\n" " "' </dev/null
  assert_output --regexp '^eth0 lo $'
  # Retry: the server's httpd may still be starting.
  eventually box_get client "$ip" 8080
  run box_get client "$ip" 8080
  assert_success
  assert_line --regexp '^HTTP/1\.[01] 200 OK'
  assert_line "over the bridge"

  # The same request from a sandbox made without a network setting fails.
  config <<<'[docker]
setup-command = "echo isolated"'
  commit_config
  run --separate-stderr lb create --json isolated
  assert_success
  assert_equal "$(jsonget .network <<<"$output")" none
  assert_equal "$(inspect "$(container_of isolated)" '{{.HostConfig.NetworkMode}}')" none
  run lb exec isolated -- ls /sys/class/net </dev/null
  assert_output lo
  run box_get isolated "$ip" 8080
  assert_failure
  refute_output --partial "200 OK"
  # And the bridge client still can: the request itself is sound.
  run box_get client "$ip" 8080
  assert_success
  assert_line "over the bridge"
}

@test "network: a named docker network puts the sandboxes on it, where they reach each other" {
  net="lbe2e-net-$REPO_SLUG"
  NETWORKS+=("$net")
  "$RUNTIME" network create "$net" >/dev/null
  config <<EOF
[docker]
network = "$net"
[[ports]]
name = "www"
target = 8080
[container.services.web]
command = $HTTPD
EOF
  commit_config
  commit_file index.html "on $net"
  run --separate-stderr lb create one
  assert_success
  assert_line "  network:   $net"
  create two
  assert_equal "$(inspect "$(container_of one)" '{{.HostConfig.NetworkMode}}')" "$net"
  assert_equal "$(inspect "$(container_of two)" '{{.HostConfig.NetworkMode}}')" "$net"
  ip=$(ip_of "$(container_of two)")
  eventually box_get one "$ip" 8080
  run box_get one "$ip" 8080
  assert_success
  assert_line "on $net"
  # The published port works on a named network too.
  run fetch "http://127.0.0.1:$(host_port one)/index.html"
  assert_output "on $net"
}

@test "limits: memory, cpus, pids, read-only, user and network from the config are on the container" {
  config <<'EOF'
[docker]
memory = "256m"
cpus = 1.5
pids = 200
read-only = true
user = "1000:1000"
[[ports]]
name = "www"
target = 8080
EOF
  commit_config
  create box
  c=$(container_of box)
  port=$(host_port box)
  assert_equal "$(inspect "$c" '{{.HostConfig.Memory}}')" 268435456
  assert_equal "$(inspect "$c" '{{.HostConfig.NanoCpus}}')" 1500000000
  assert_equal "$(inspect "$c" '{{.HostConfig.PidsLimit}}')" 200
  assert_equal "$(inspect "$c" '{{.HostConfig.ReadonlyRootfs}}')" true
  assert_equal "$(inspect "$c" '{{.Config.User}}')" 1000:1000
  assert_equal "$(inspect "$c" '{{.HostConfig.NetworkMode}}')" bridge
  assert_equal "$(inspect "$c" '{{(index (index .HostConfig.PortBindings "8080/tcp") 0).HostIp}}')" 127.0.0.1
  assert_equal "$(inspect "$c" '{{(index (index .HostConfig.PortBindings "8080/tcp") 0).HostPort}}')" "$port"
  run lb exec box -- sh -c 'cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/memory/memory.limit_in_bytes' </dev/null
  assert_success
  assert_output "$(printf '200\n268435456')"

  printf '[docker]\nread-only = false\npids = 300\nmemory = 134217728\ncpus = 1\n' | config .litterbox.local.toml
  create box2
  c=$(container_of box2)
  assert_equal "$(inspect "$c" '{{.HostConfig.ReadonlyRootfs}}')" false
  assert_equal "$(inspect "$c" '{{.HostConfig.PidsLimit}}')" 300
  assert_equal "$(inspect "$c" '{{.HostConfig.Memory}}')" 134217728
  assert_equal "$(inspect "$c" '{{.HostConfig.NanoCpus}}')" 1000000000
}

@test "user: the configured uid:gid owns /src and runs exec and services; a later edit of user does not change the sandbox" {
  config <<'EOF'
[docker]
user = "2345"
[container.services.who]
command = "id -u; id -g; exec sleep 300"
EOF
  commit_config
  create box
  assert_equal "$(inspect "$(container_of box)" '{{.Config.User}}')" 2345:2345
  run lb exec box -- sh -c 'id -u; id -g; find /src -mindepth 1 ! -user 2345 | head -3' </dev/null
  assert_success
  assert_output "$(printf '2345\n2345')"
  eventually sh -c "\"\$LITTERBOX\" service box logs who | grep -q 2345"
  run lb service box logs who
  assert_equal "$(grep -c '^2345$' <<<"$output")" 2

  printf '[docker]\nuser = "3000:3000"\n' | config
  run lb exec box -- sh -c 'id -u; echo new >new.txt && ls -n new.txt | awk "{print \$3\":\"\$4}"' </dev/null
  assert_success
  assert_line --index 0 2345
  assert_line --index 1 2345:2345
}

@test "config: an unknown table or key, or a key in the wrong table, creates nothing and names the nearest key; doctor says the same" {
  printf '[dokcer]\nimage = "golang:1.23"\n' >.litterbox.toml
  run --separate-stderr lb create box
  assert_failure 1
  assert_output ""
  assert_stderr "Error: .litterbox.toml, line 1: unknown table [dokcer]; did you mean [docker]?"
  branch_exists litterbox/box && fail "a branch was made"
  run lb doctor
  assert_failure 1
  assert_output --partial ".litterbox.toml, line 1: unknown table [dokcer]; did you mean [docker]?"

  printf '[docker]\nimgae = "golang:1.23"\n' >.litterbox.toml
  run --separate-stderr lb create box
  assert_failure 1
  assert_stderr "Error: .litterbox.toml, line 2: unknown key imgae in [docker]; did you mean image?"

  rm .litterbox.toml
  printf '[docker]\nmode = "allow"\n' >.litterbox.local.toml
  run --separate-stderr lb create box
  assert_failure 1
  assert_stderr "Error: .litterbox.local.toml, line 2: unknown key mode in [docker]; mode belongs in [network]."
  assert_equal "$(litterbox_names)" ""
}
