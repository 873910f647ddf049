package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
	"github.com/csv-cleaner/csv-cleaner/test/netnsforward/carry"
)

// VeleroNamespace is where the harness runs Velero.
const VeleroNamespace = "velero"

// The S3 server's keys and bucket.
const (
	s3AccessKey = "csvcleaner"
	s3SecretKey = "csvcleanersecret"
	s3Bucket    = "backups"
)

var (
	veleroBackupKind   = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "Backup"}
	veleroRestoreKind  = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "Restore"}
	veleroLocationKind = schema.GroupVersionKind{Group: "velero.io", Version: "v1", Kind: "BackupStorageLocation"}
)

// Velero is a real Velero beside the local cluster, as processes: its
// server (bin/velero) with the AWS plugin (bin/velero-plugin-for-aws), and
// an S3 server (bin/versitygw) on 127.0.0.1 holding the backups. Velero's
// server runs in a network namespace of its own (startServer).
type Velero struct {
	c      *Cluster
	dir    string
	s3Port int
	s3     *controlplane.Process
	server *controlplane.Process
	// carried are the Unix sockets Velero's namespace reaches this one by.
	carried []net.Listener
	// csi: Velero takes CSI snapshots of the claims it backs up.
	csi bool
	// workers is Velero's --item-block-worker-count.
	workers int
}

// VeleroWorkersEnv sets how many item-block workers the harness's Velero
// runs (default DefaultVeleroWorkers): what csv-cleaner's Backups are
// tested with, as manifests/velero and docs/backup.md recommend.
const VeleroWorkersEnv = "VELERO_ITEM_BLOCK_WORKERS"

// DefaultVeleroWorkers is the harness's item-block worker count: csv-cleaner's
// Backups leave the PersistentVolumes out, which Velero v1.18.3's workers
// record in a map without a lock (docs/backup.md).
const DefaultVeleroWorkers = 8

// The harness's Velero client rate limit, which its plugins take too:
// manifests/velero/server-settings.json recommends the same.
const (
	VeleroClientQPS   = 500
	VeleroClientBurst = 1000
)

// VeleroWorkers is the item-block worker count VeleroWorkersEnv sets, else
// DefaultVeleroWorkers; an unreadable value is an error.
func VeleroWorkers() (int, error) {
	s := os.Getenv(VeleroWorkersEnv)
	if s == "" {
		return DefaultVeleroWorkers, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a count of workers, 1 or more", VeleroWorkersEnv, s)
	}
	return n, nil
}

// Workers is the item-block worker count this Velero runs.
func (v *Velero) Workers() int { return v.workers }

// Healthy says whether Velero's server still runs the process the harness
// started, with no fatal error in its log (Go's runtime writes "fatal
// error:" when it dies of, among others, concurrent map writes).
func (v *Velero) Healthy() error {
	if v.server.Exited() {
		return fmt.Errorf("velero's server exited; its log: %s", filepath.Join(v.c.LogDir, "velero.log"))
	}
	log, err := os.ReadFile(filepath.Join(v.c.LogDir, "velero.log"))
	if err != nil {
		return err
	}
	if i := strings.Index(string(log), "fatal error:"); i >= 0 {
		return fmt.Errorf("velero's log has a fatal error: %s", strings.SplitN(string(log[i:]), "\n", 2)[0])
	}
	return nil
}

// StartVelero installs Velero's CRDs, its namespace, a
// BackupStorageLocation on the S3 server and the Deployment velero/velero
// its restores read their image from (replicas 0), starts the S3 server
// and Velero's server, and waits for the location to be Available.
func (c *Cluster) StartVelero(ctx context.Context) (*Velero, error) {
	return c.startVelero(ctx, false, 0)
}

// StartVeleroCSI is StartVelero with Velero's CSI snapshots on
// (--features=EnableCSI, still needed in v1.18, and the snapshot handle
// polled every second: CSI_SNAPSHOT_EARLY_FREQUENT_POLLING), for a cluster
// whose CSI stack runs (StartCSI).
func (c *Cluster) StartVeleroCSI(ctx context.Context) (*Velero, error) {
	return c.startVelero(ctx, true, 0)
}

// StartVeleroCSIWorkers is StartVeleroCSI with workers item-block workers
// (0: VeleroWorkers), for a benchmark that compares counts.
func (c *Cluster) StartVeleroCSIWorkers(ctx context.Context, workers int) (*Velero, error) {
	return c.startVelero(ctx, true, workers)
}

func (c *Cluster) startVelero(ctx context.Context, csi bool, workers int) (*Velero, error) {
	if workers == 0 {
		var err error
		if workers, err = VeleroWorkers(); err != nil {
			return nil, err
		}
	}
	for _, b := range []string{"velero", "velero-plugin-for-aws", "versitygw"} {
		if _, err := os.Stat(filepath.Join(c.BinDir, b)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run 'make backup-tools' first: %w", b, c.BinDir, err)
		}
	}
	dir, err := os.MkdirTemp("", "csv-cleaner-velero-")
	if err != nil {
		return nil, err
	}
	v := &Velero{c: c, dir: dir, csi: csi, workers: workers}
	for _, d := range []string{filepath.Join("s3", s3Bucket), "plugins", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	plugin, err := os.ReadFile(filepath.Join(c.BinDir, "velero-plugin-for-aws"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "plugins", "velero-plugin-for-aws"), plugin, 0o755); err != nil {
		return nil, err
	}
	credentials := filepath.Join(dir, "credentials")
	if err := os.WriteFile(credentials, []byte("[default]\naws_access_key_id="+s3AccessKey+"\naws_secret_access_key="+s3SecretKey+"\n"), 0o600); err != nil {
		return nil, err
	}
	if v.s3Port, err = controlplane.FreePort(); err != nil {
		return nil, err
	}
	if err := v.StartStorage(); err != nil {
		return nil, err
	}
	if err := v.install(ctx); err != nil {
		return nil, errors.Join(err, v.Stop())
	}
	if err := v.startServer(credentials); err != nil {
		return nil, errors.Join(err, v.Stop())
	}
	if err := v.WaitLocation(ctx, "Available"); err != nil {
		return nil, errors.Join(err, v.Stop())
	}
	return v, nil
}

// startServer starts Velero's server in a network namespace of its own
// (`unshare -n`, only a loopback interface): it binds :8080 with no flag to
// change it, where OLM's operators listen. test/netnsforward, in there,
// carries its connections to kube-apiserver and the S3 server over Unix
// sockets to this process, which dials them here.
func (v *Velero) startServer(credentials string) error {
	forward := filepath.Join(v.dir, "netnsforward")
	if err := build(forward, "./test/netnsforward"); err != nil {
		return err
	}
	api, err := url.Parse(v.c.Config.Host)
	if err != nil {
		return fmt.Errorf("reading kube-apiserver's address %q: %w", v.c.Config.Host, err)
	}
	args := []string{"-n", "sh", "-c", `ip link set lo up && exec "$0" "$@"`, forward}
	for _, addr := range []string{api.Host, "127.0.0.1:" + strconv.Itoa(v.s3Port)} {
		sock := filepath.Join(v.dir, "sockets", strings.ReplaceAll(addr, ":", "-")+".sock")
		if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
			return err
		}
		ln, err := net.Listen("unix", sock)
		if err != nil {
			return err
		}
		v.carried = append(v.carried, ln)
		go carry.Serve(ln, func() (net.Conn, error) { return net.Dial("tcp", addr) })
		args = append(args, "-listen", addr+"="+sock)
	}
	metrics, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	args = append(args, "--", filepath.Join(v.c.BinDir, "velero"),
		"server", "--kubeconfig="+v.c.Kubeconfig, "--namespace="+VeleroNamespace,
		"--plugin-dir="+filepath.Join(v.dir, "plugins"),
		"--metrics-address=127.0.0.1:"+strconv.Itoa(metrics), "--profiler-address=",
		// Parallel item-block workers: csv-cleaner's Backups leave the PVs
		// out, which v1.18.3's workers would record at once (docs/backup.md).
		// Its plugins take the client QPS and burst from these flags: a CSI
		// snapshot's first poll waits at most 10 s on their rate limiter.
		"--item-block-worker-count="+strconv.Itoa(v.workers),
		"--client-qps="+strconv.Itoa(VeleroClientQPS), "--client-burst="+strconv.Itoa(VeleroClientBurst))
	env := []string{"TMPDIR=" + filepath.Join(v.dir, "tmp"), "AWS_SHARED_CREDENTIALS_FILE=" + credentials}
	if v.csi {
		args = append(args, "--features=EnableCSI")
		env = append(env, "CSI_SNAPSHOT_EARLY_FREQUENT_POLLING=true")
	}
	v.server, err = controlplane.StartProcess("velero", "unshare", args, env, v.c.LogDir)
	return err
}

// install creates Velero's CRDs, namespace, storage location and the
// placeholder Deployment its restores read their image from.
func (v *Velero) install(ctx context.Context) error {
	paths, err := controlplane.VeleroCRDs()
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(v.c.Config, envtest.CRDInstallOptions{Paths: paths}); err != nil {
		return fmt.Errorf("installing Velero's CRDs: %w", err)
	}
	if err := client.IgnoreAlreadyExists(v.c.Client.Create(ctx, fixtures.Namespace(VeleroNamespace))); err != nil {
		return err
	}
	bsl := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"provider": "aws", "default": true, "validationFrequency": "10s",
		"objectStorage": map[string]any{"bucket": s3Bucket},
		"config": map[string]any{"region": "us-east-1", "s3ForcePathStyle": "true",
			"s3Url": "http://127.0.0.1:" + strconv.Itoa(v.s3Port)},
	}}}
	bsl.SetGroupVersionKind(veleroLocationKind)
	bsl.SetNamespace(VeleroNamespace)
	bsl.SetName("default")
	// An earlier Velero's location names its S3 server, and says what that
	// Velero found: this one starts afresh.
	if err := client.IgnoreNotFound(v.c.Client.Delete(ctx, bsl.DeepCopy())); err != nil {
		return fmt.Errorf("deleting an earlier BackupStorageLocation: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := v.c.Client.Create(ctx, bsl.DeepCopy())
		return err == nil, client.IgnoreAlreadyExists(err)
	})
	if err != nil {
		return fmt.Errorf("creating Velero's BackupStorageLocation: %w", err)
	}
	labels := map[string]string{"component": "velero"}
	// It carries the server's arguments, as `velero install`'s does:
	// csv-cleaner reads the item-block workers there.
	server := corev1.Container{Name: "velero", Image: "velero/velero:v1.18.3",
		Args: []string{"server", "--item-block-worker-count=" + strconv.Itoa(v.workers)}}
	placeholder := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: VeleroNamespace, Name: "velero"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{server}}}},
	}
	err = v.c.Client.Create(ctx, placeholder)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	// An earlier Velero's, of another worker count.
	existing := &appsv1.Deployment{}
	if err := v.c.Client.Get(ctx, client.ObjectKeyFromObject(placeholder), existing); err != nil {
		return err
	}
	existing.Spec.Template.Spec.Containers = []corev1.Container{server}
	return v.c.Client.Update(ctx, existing)
}

// StartStorage starts the S3 server (again, after StopStorage).
func (v *Velero) StartStorage() error {
	var err error
	v.s3, err = controlplane.StartProcess("versitygw", filepath.Join(v.c.BinDir, "versitygw"),
		[]string{"--port", "127.0.0.1:" + strconv.Itoa(v.s3Port), "posix", filepath.Join(v.dir, "s3")},
		[]string{"ROOT_ACCESS_KEY_ID=" + s3AccessKey, "ROOT_SECRET_ACCESS_KEY=" + s3SecretKey}, v.c.LogDir)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(v.s3Port), time.Second)
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	})
}

// StopStorage stops the S3 server: Velero's backups fail, and its location
// turns Unavailable at its next validation.
func (v *Velero) StopStorage() error {
	return v.s3.Stop(10 * time.Second)
}

// WaitLocation waits until the default BackupStorageLocation's phase is phase.
func (v *Velero) WaitLocation(ctx context.Context, phase string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		bsl := &unstructured.Unstructured{}
		bsl.SetGroupVersionKind(veleroLocationKind)
		if err := v.c.Client.Get(ctx, client.ObjectKey{Namespace: VeleroNamespace, Name: "default"}, bsl); err != nil {
			return false, nil
		}
		last, _, _ = unstructured.NestedString(bsl.Object, "status", "phase")
		return last == phase, nil
	})
	if err != nil {
		return fmt.Errorf("the default BackupStorageLocation is %q, not %s (see velero.log): %w", last, phase, err)
	}
	return nil
}

// Backup reads a Backup.
func (v *Velero) Backup(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	b := &unstructured.Unstructured{}
	b.SetGroupVersionKind(veleroBackupKind)
	return b, v.c.Client.Get(ctx, client.ObjectKey{Namespace: VeleroNamespace, Name: name}, b)
}

// Restore restores the Backup called backup, as `velero restore create
// --from-backup` does, leaving out the kinds excluded, and waits for it to
// end; it returns the Restore's phase.
func (v *Velero) Restore(ctx context.Context, backup string, excluded ...string) (string, error) {
	r := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"backupName": backup}}}
	if len(excluded) > 0 {
		list := make([]any, len(excluded))
		for i, e := range excluded {
			list[i] = e
		}
		r.Object["spec"].(map[string]any)["excludedResources"] = list
	}
	r.SetGroupVersionKind(veleroRestoreKind)
	r.SetNamespace(VeleroNamespace)
	r.SetGenerateName(backup + "-")
	if err := v.c.Client.Create(ctx, r); err != nil {
		return "", fmt.Errorf("creating a Restore of %s: %w", backup, err)
	}
	var phase string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := v.c.Client.Get(ctx, client.ObjectKeyFromObject(r), r); err != nil {
			return false, nil
		}
		phase, _, _ = unstructured.NestedString(r.Object, "status", "phase")
		switch phase {
		case "Completed", "PartiallyFailed", "Failed", "FailedValidation":
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return phase, fmt.Errorf("the Restore %s of %s is %q (see velero.log): %w", r.GetName(), backup, phase, err)
	}
	return phase, nil
}

// Restart stops Velero's server and starts it again: it reads the API
// server's kinds at its start, as it does every 5 minutes.
func (v *Velero) Restart(ctx context.Context) error {
	if err := v.server.Stop(30 * time.Second); err != nil {
		return fmt.Errorf("stopping Velero's server: %w", err)
	}
	for _, ln := range v.carried {
		_ = ln.Close()
	}
	v.carried = nil
	if err := v.startServer(filepath.Join(v.dir, "credentials")); err != nil {
		return err
	}
	return v.WaitLocation(ctx, "Available")
}

// Stop stops Velero's server and the S3 server.
func (v *Velero) Stop() error {
	var errs []error
	if v.server != nil {
		errs = append(errs, v.server.Stop(30*time.Second))
	}
	if v.s3 != nil {
		errs = append(errs, v.s3.Stop(10*time.Second))
	}
	for _, ln := range v.carried {
		_ = ln.Close()
	}
	if os.Getenv("KEEP_CONTROL_PLANE_LOGS") == "" {
		errs = append(errs, os.RemoveAll(v.dir))
	}
	return errors.Join(errs...)
}
