package envtest_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// takeVolume takes the PersistentVolume of a claim the Backup takes, as
// Velero v1.18.3's PVC action returns it as an additional item: unless
// the policy excludes persistentvolumes, or its cluster-scoped filter
// lists them without this one's name.
func (v *fakeVelero) takeVolume(p veleroPolicy, claim *unstructured.Unstructured, add func(key, object string)) {
	if claim == nil {
		return
	}
	pv, _, _ := unstructured.NestedString(claim.Object, "spec", "volumeName")
	const r = "persistentvolumes"
	filtered := slices.ContainsFunc(p.ClusterScopedFilterPolicy.ResourceFilters, func(f veleroFilter) bool { return slices.Contains(f.Kinds, r) })
	if pv == "" || slices.Contains(p.IncludeExcludePolicy.ExcludedClusterScopedResources, r) || filtered && !takes(p.ClusterScopedFilterPolicy.ResourceFilters, r, pv) {
		return
	}
	add("v1/PersistentVolume", pv)
}

// claimsOf are the claims (namespace/name) a Backup took, with the name of
// the PersistentVolume each is bound to in its copy.
func (v *fakeVelero) claimsOf(backup string, list map[string][]string) map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]string{}
	for _, claim := range list["v1/PersistentVolumeClaim"] {
		pv := ""
		if c := v.copies[backup]["persistentvolumeclaims/"+claim]; c != nil {
			pv, _, _ = unstructured.NestedString(c.Object, "spec", "volumeName")
		}
		out[claim] = pv
	}
	return out
}

// volumeInfos is a Backup's volume information as Velero v1.18.3 writes
// it: a CSI snapshot's entry only for a claim whose PersistentVolume the
// Backup holds (generateVolumeInfoForCSIVolumeSnapshot finds the claim
// through the PVs it backed up, and drops the others).
func (v *fakeVelero) volumeInfos(backup string, list map[string][]string) []map[string]any {
	v.mu.Lock()
	result := v.snapshots
	v.mu.Unlock()
	infos := []map[string]any{}
	for claim, pv := range v.claimsOf(backup, list) {
		ns, pvc, _ := strings.Cut(claim, "/")
		if result != "" && pv != "" && slices.Contains(list["v1/PersistentVolume"], pv) {
			infos = append(infos, map[string]any{"pvcName": pvc, "pvcNamespace": ns, "backupMethod": "CSISnapshot", "result": result})
		}
	}
	return infos
}

// serveContents serves a Backup's tarball as Velero's storage holds it,
// with what its restore reads of the CSI snapshots: each claim's copy
// annotated with its VolumeSnapshot, the VolumeSnapshot (bound to its
// content, or with an error when the snapshots fail) and the content with
// its handle, each under its resource and again in its version folder.
func (v *fakeVelero) serveContents(w http.ResponseWriter, backup string, list map[string][]string) {
	v.mu.Lock()
	result := v.snapshots
	v.mu.Unlock()
	w.Header().Set("Content-Type", "application/octet-stream")
	z := gzip.NewWriter(w)
	tw := tar.NewWriter(z)
	put := func(path string, o map[string]any) {
		b, _ := json.Marshal(o)
		_ = tw.WriteHeader(&tar.Header{Name: path, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		_, _ = tw.Write(b)
	}
	for claim := range v.claimsOf(backup, list) {
		ns, pvc, _ := strings.Cut(claim, "/")
		meta := map[string]any{"namespace": ns, "name": pvc}
		vs, vsc := "velero-"+pvc+"-fake", "snapcontent-"+ns+"-"+pvc
		if result != "" {
			meta["annotations"] = map[string]any{"velero.io/volume-snapshot-name": vs}
			status := map[string]any{"boundVolumeSnapshotContentName": vsc, "readyToUse": true}
			if result != "succeeded" {
				status = map[string]any{"readyToUse": false, "error": map[string]any{"message": "the fake CSI driver failed"}}
			}
			snapshot := map[string]any{"metadata": map[string]any{"namespace": ns, "name": vs},
				"spec": map[string]any{"source": map[string]any{"persistentVolumeClaimName": pvc}}, "status": status}
			for _, dir := range []string{"", "v1-preferredversion/"} {
				put("resources/volumesnapshots.snapshot.storage.k8s.io/"+dir+"namespaces/"+ns+"/"+vs+".json", snapshot)
			}
			put("resources/volumesnapshotcontents.snapshot.storage.k8s.io/cluster/"+vsc+".json", map[string]any{"status": map[string]any{"snapshotHandle": "handle-" + vsc}})
		}
		for _, dir := range []string{"", "v1-preferredversion/"} {
			put("resources/persistentvolumeclaims/"+dir+"namespaces/"+ns+"/"+pvc+".json", map[string]any{"metadata": meta})
		}
	}
	_ = tw.Close()
	_ = z.Close()
}

// veleroResult is one list of Velero's results.
type veleroResult struct {
	Velero     []string            `json:"velero,omitempty"`
	Cluster    []string            `json:"cluster,omitempty"`
	Namespaces map[string][]string `json:"namespaces,omitempty"`
}

// results are a Backup's results, its errors those the spec set
// (failBackups), as item errors of Velero's namespace.
func (v *fakeVelero) results() map[string]veleroResult {
	v.mu.Lock()
	defer v.mu.Unlock()
	errs := veleroResult{}
	if len(v.backupErrors) > 0 {
		errs.Namespaces = map[string][]string{v.namespace: slices.Clone(v.backupErrors)}
	}
	return map[string]veleroResult{"errors": errs, "warnings": {}}
}

// failBackups makes the Backups end PartiallyFailed with errors (as
// Velero's results list item errors) from now on.
func (v *fakeVelero) failBackups(errors ...string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.outcome, v.backupErrors = "PartiallyFailed", errors
}

// fakeWorkers is the item-block workers the fake's server Deployment says.
const fakeWorkers = 8

// serverDeployment makes the Deployment `velero install` makes for Velero's
// server (scaled to zero: the fake is this process), its args naming the
// item-block workers, as csv-cleaner reads them.
func (v *fakeVelero) serverDeployment(ctx context.Context) {
	GinkgoHelper()
	labels := map[string]string{"component": "velero"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: v.namespace, Name: "velero"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "velero", Image: "velero/velero:v1.18.3", Args: []string{"server", "--item-block-worker-count=" + strconv.Itoa(fakeWorkers)}}}}}}}
	Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, d))).To(Succeed())
}
