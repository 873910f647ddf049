package bundle_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/csv-cleaner/csv-cleaner/test/cluster"
	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// TestVeleroServerSettings applies manifests/velero/server-settings.json to
// a Deployment as `velero install` makes it: the server then runs the
// worker count, client rate limit and early polling the tests and the
// benchmark run (test/cluster), which docs/backup.md gives.
func TestVeleroServerSettings(t *testing.T) {
	patch, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "manifests", "velero", "server-settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	installed := appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "velero", Args: []string{"server", "--features=EnableCSI", "--uploader-type=kopia"},
		Env: []corev1.EnvVar{{Name: "VELERO_SCRATCH_DIR", Value: "/scratch"}, {Name: "VELERO_NAMESPACE", Value: "velero"}}}}}}}}
	doc, err := json.Marshal(installed)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("reading server-settings.json as a JSON patch: %v", err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("applying server-settings.json to velero install's Deployment: %v", err)
	}
	var got appsv1.Deployment
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	server := got.Spec.Template.Spec.Containers[0]
	for _, want := range []string{"server", "--features=EnableCSI", "--uploader-type=kopia",
		"--item-block-worker-count=" + strconv.Itoa(cluster.DefaultVeleroWorkers),
		"--client-qps=" + strconv.Itoa(cluster.VeleroClientQPS), "--client-burst=" + strconv.Itoa(cluster.VeleroClientBurst)} {
		if !slices.Contains(server.Args, want) {
			t.Errorf("the patched server's args %q lack %q", server.Args, want)
		}
	}
	if !slices.Contains(server.Env, corev1.EnvVar{Name: "CSI_SNAPSHOT_EARLY_FREQUENT_POLLING", Value: "true"}) || len(server.Env) != 3 {
		t.Errorf("the patched server's env %v: want velero install's and CSI_SNAPSHOT_EARLY_FREQUENT_POLLING=true", server.Env)
	}
}
