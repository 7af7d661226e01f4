#!/usr/bin/env bats
# The Kubernetes provider (README: "Kubernetes") on the real throwaway
# cluster make test brings up (scripts/k8s/with-cluster.sh): the lifecycle
# (create, list, stop by pause, resume, delete), the agent tools over MCP,
# review (diff, log, apply, merge), the pod's hardening, ports forwarded
# with kubectl port-forward, doctor, and gVisor through a RuntimeClass. KUBECONFIG and PATH point at the
# cluster and its kubectl; without them every test fails.

# shellcheck disable=SC2154,SC2016 # bats sets status/output/lines/stderr; JSON in single quotes
bats_require_minimum_version 1.5.0
export LITTERBOX_RUNTIME=kubernetes
load helpers

setup_file() {
  build_helpers mcpcall
  kubectl get --raw /readyz >/dev/null || {
    echo "no Kubernetes cluster: run the e2e suite through scripts/k8s/with-cluster.sh (make test does)" >&2
    return 1
  }
}
setup() { common_setup; }
teardown() { common_teardown; }

pod_of() { container_of "$@"; }
k8s_has() { kubectl get "$1" --ignore-not-found --output name | grep -q .; }

@test "kubernetes: create, list, exec, stop by pause, resume, delete" {
  printf 'cache/\n' >>.gitignore
  git commit -qam "ignore cache"
  run lb_ok create box
  assert_success
  assert_output --partial "Created sandbox 'box'"
  assert_output --regexp "storage: +PersistentVolumeClaim of storage class litterbox-local"
  pod=$(pod_of box)
  run kubectl get pod "$pod" --output 'jsonpath={.status.phase}'
  assert_output Running
  assert_equal "$(list_status box)" active

  run lb_ok exec box -- sh -c 'id -u; cat README.md; mkdir -p cache && echo kept > cache/x && echo tracked > t.txt'
  assert_output $'1000\n# demo'
  assert_equal "$(git show litterbox/box:t.txt)" tracked

  run lb_ok pause box
  assert_output --partial "Stopped sandbox 'box'"
  assert_equal "$(list_status box)" stopped
  run kubectl get pod "$pod"
  assert_failure
  k8s_has "persistentvolumeclaim/$(volume_of box)"
  run lb exec box -- true
  assert_failure
  assert_output --partial stopped

  run lb_ok resume box
  assert_output --partial "Started stopped sandbox 'box'"
  # The claim kept /src, ignored files included; the new pod runs the helper.
  run lb_ok exec box -- cat cache/x t.txt
  assert_output $'kept\ntracked'
  assert_equal "$(list_status box)" active

  run lb_ok delete box --force
  for o in "pod/$pod" "configmap/$pod" "networkpolicy/$pod" "persistentvolumeclaim/$(volume_of box)"; do
    run k8s_has "$o"
    assert_failure
  done
  run branch_exists litterbox/box
  assert_failure
}

@test "kubernetes: the agent tools over MCP commit every change" {
  create box
  base=$(git rev-parse HEAD)
  run --separate-stderr mcpcall --repo "$REPO" \
    write '{"sandbox":"box","path":"notes.txt","content":"alpha\nbeta\n"}' \
    edit '{"sandbox":"box","path":"notes.txt","old_string":"beta","new_string":"gamma"}' \
    bash '{"sandbox":"box","command":"echo made > made.txt; rm run.sh; echo $LITTERBOX_SANDBOX"}' \
    read '{"sandbox":"box","path":"notes.txt"}' \
    grep '{"sandbox":"box","pattern":"gam+a"}' \
    glob '{"sandbox":"box","pattern":"**/*.txt"}' \
    ls '{"sandbox":"box","path":"src"}' \
    sandbox-milestone '{"sandbox":"box","message":"tools done"}'
  assert_success
  assert_equal "${#lines[@]}" 8
  for l in "${lines[@]}"; do
    assert_equal "$(jsonget .isError <<<"$l")" false
  done
  assert_equal "$(jsonget .structuredContent.stdout <<<"${lines[2]}")" box
  assert_output --partial 'alpha'
  assert_output --partial 'gamma'
  assert_output --partial 'made.txt'
  # The changing calls (write, edit, bash) made commits that the milestone
  # squashed into one.
  assert_equal "$(git rev-list --count "$base..litterbox/box")" 1
  assert_equal "$(git log -1 --format=%s litterbox/box)" "tools done"
  assert_equal "$(git show litterbox/box:notes.txt)" $'alpha\ngamma'
  run git cat-file -e litterbox/box:run.sh
  assert_failure
}

@test "kubernetes: review with diff, log, apply and merge" {
  create box
  lb_ok exec box -- sh -c 'echo reviewed > review.txt' >/dev/null
  run lb_ok diff box
  assert_output --partial "+reviewed"
  run lb_ok log box
  assert_output --partial "review.txt"
  lb_ok apply box >/dev/null
  assert_equal "$(cat review.txt)" reviewed
  git checkout -q -- . && git clean -qfd
  lb_ok merge box >/dev/null
  assert_equal "$(git show HEAD:review.txt)" reviewed
}

@test "kubernetes: the pod carries the sandbox's hardening" {
  create box
  pod=$(pod_of box)
  spec=$(kubectl get pod "$pod" --output json)
  for want in '"runAsNonRoot": true' '"runAsUser": 1000' '"readOnlyRootFilesystem": true' \
    '"allowPrivilegeEscalation": false' '"RuntimeDefault"' '"automountServiceAccountToken": false'; do
    assert_regex "$spec" "$want"
  done
  assert_regex "$spec" '"drop": \[[[:space:]]*"ALL"'
  refute_regex "$spec" hostPath
  # network "none" (the default) is a deny-all NetworkPolicy on the pod.
  run kubectl get networkpolicy "$pod" --output 'jsonpath={.spec.policyTypes}'
  assert_output '["Ingress","Egress"]'
  run lb exec box -- sh -c 'ls /var/run/secrets/kubernetes.io'
  assert_failure
  run lb exec box -- sh -c 'touch /etc/x'
  assert_failure
}

@test "kubernetes: ports --forward reaches a service in the pod from 127.0.0.1" {
  cat >.litterbox.toml <<'TOML'
[docker]
network = "bridge"
[[ports]]
name = "web"
target = 8080
[container.services.web]
command = ["busybox", "httpd", "-f", "-p", "8080", "-h", "/src"]
TOML
  git add .litterbox.toml
  git commit -qm ports
  lb_ok trust >/dev/null
  create box
  port=$(lb_ok ports box --json | jsonget '.[name=web].host_port')
  lb ports box --forward 2>"$BATS_TEST_TMPDIR/fwd" &
  fwd=$!
  eventually curl -fsS "http://127.0.0.1:$port/README.md" || true
  run curl -fsS "http://127.0.0.1:$port/README.md"
  kill "$fwd"
  wait "$fwd" || true
  assert_success
  assert_output "# demo"
  run lb ports box --forward --runtime docker
  assert_failure
  assert_output --partial -- "--forward is for --runtime kubernetes"
}

@test "kubernetes: doctor checks the context, permissions, storage and network policy" {
  run lb doctor
  assert_output --regexp "context +.*context litterbox-test, namespace default"
  assert_output --regexp "permissions +.*all 19 verbs"
  assert_output --regexp "storage +.*litterbox-local"
  assert_output --regexp "network policy +.*no network plugin known to enforce"
  assert_output --regexp "sandbox +.*busybox:latest runs sandboxes"
  # The test cluster's RuntimeClass gvisor (scripts/k8s/up.sh): a probe ran on it.
  assert_output --regexp "isolation +container, gvisor \(RuntimeClass gvisor: a probe ran on its kernel 4\.4\.0\)"
}

@test "kubernetes: create --isolation gvisor runs the pod under RuntimeClass gvisor, on gVisor's kernel" {
  run --separate-stderr lb create --isolation gvisor gv
  assert_success
  assert_line "  isolation: gvisor (its own kernel in user space, not the host's)"
  run kubectl get pod "$(pod_of gv)" --output 'jsonpath={.spec.runtimeClassName}'
  assert_output gvisor
  run lb exec gv -- sh -c 'uname -r; echo x > x.txt' </dev/null
  assert_success
  assert_line 4.4.0
  assert_equal "$(git show litterbox/gv:x.txt)" x
  assert_equal "$(lb_ok list --json | jsonget '.[name=gv].isolation')" gvisor
  lb_ok delete --force gv >/dev/null
  run k8s_has "pod/$(pod_of gv)"
  assert_failure
}

@test "kubernetes: an image with no shell is refused in one line and leaves nothing" {
  printf '[docker]\nimage = "litterbox-test/noshell:latest"\n' >.litterbox.local.toml
  run --separate-stderr lb create box
  assert_failure
  assert_equal "${#stderr_lines[@]}" 1
  assert_regex "$stderr" "has no /bin/sh"
  run k8s_has "configmap/$(pod_of box)"
  assert_failure
  run k8s_has "persistentvolumeclaim/$(volume_of box)"
  assert_failure
}

@test "kubernetes: a create claims a pod from the warm pool, which refills in the background; delete leaves nothing of it" {
  printf '[pool]\nsize = 1\n' >.litterbox.local.toml
  run --separate-stderr lb pool fill
  assert_success
  assert_line --regexp "^Made litterbox-$REPO_SLUG-[0-9a-f]{8}\.pool-[0-9a-f]{8}\.\$"
  entry=$(lb_ok pool --json | jsonget '.ready.*')

  run --separate-stderr lb create warm
  assert_success
  assert_line --regexp "^  pool: +made ahead \($entry\)\$"
  # The sandbox's name is an alias of the pod the entry was made as.
  c=$(container_of warm)
  pod=$(kubectl get configmap "$c" --output 'jsonpath={.metadata.annotations.dev\.litterbox\.alias-of}')
  [ -n "$pod" ]
  run kubectl get pod "$pod" --output 'jsonpath={.status.phase}'
  assert_output Running
  run lb_ok exec warm -- sh -c 'echo $LITTERBOX_SANDBOX; id -u; cat README.md'
  assert_output $'warm\n1000\n# demo'
  assert_equal "$(list_status warm)" active

  # The create started a refill, which makes a new pod.
  local i refill=
  for ((i = 0; i < 300; i++)); do
    refill=$(lb_ok pool --json | jsonget '.ready.*')
    [ -n "$refill" ] && break
    sleep 0.2
  done
  [ -n "$refill" ] && [ "$refill" != "$entry" ]

  run lb_ok delete warm --force
  for o in "pod/$pod" "configmap/$pod" "networkpolicy/$pod" "configmap/$c" "configmap/$entry" "persistentvolumeclaim/$entry-src"; do
    run k8s_has "$o"
    assert_failure
  done
  run lb_ok pool drain
  assert_output "Removed $refill."
  run kubectl get configmaps,pods,persistentvolumeclaims --output name
  refute_output --partial "$REPO_SLUG"
}
