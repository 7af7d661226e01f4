package testenv

import (
	"slices"
	"strings"
	"testing"
)

// The two groups split the providers between them: each is in exactly one,
// so make test's two lanes together run the contract on all of them.
func TestExpandGroups(t *testing.T) {
	local, cluster := expandGroups([]string{"local"}), expandGroups([]string{"cluster"})
	if len(local)+len(cluster) != len(ProviderNames) {
		t.Fatalf("local %v and cluster %v do not split %v", local, cluster, ProviderNames)
	}
	for _, p := range ProviderNames {
		if slices.Contains(local, p) == slices.Contains(cluster, p) {
			t.Errorf("%s is in both groups or in neither", p)
		}
	}
	for _, p := range cluster {
		if !strings.HasPrefix(p, "kubernetes") {
			t.Errorf("cluster holds %s", p)
		}
	}
	if got := expandGroups([]string{"docker", "cluster"}); !slices.Equal(got, append([]string{"docker"}, cluster...)) {
		t.Errorf("docker,cluster = %v", got)
	}
}
