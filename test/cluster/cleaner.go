package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/test/controlplane"
)

// The csv-cleaner an existing cluster runs (installed from its bundle).
const (
	EnvCleanerNamespace  = "E2E_CLEANER_NAMESPACE"
	EnvCleanerDeployment = "E2E_CLEANER_DEPLOYMENT"
)

// LeaseName is csv-cleaner's leader election lease.
const LeaseName = "csv-cleaner.cleanup.csv-cleaner.io"

// Cleaner runs csv-cleaner: on the local cluster as bin/csv-cleaner
// processes with leader election, on an existing cluster as the replicas
// of its Deployment.
type Cleaner struct {
	c          *Cluster
	Namespace  string
	Deployment string
	// Args are extra flags of the local processes.
	Args []string
	// Kubeconfig the local processes use; the cluster's admin by default.
	Kubeconfig string
	// Env is added to the local processes' environment.
	Env []string
	// SecureMetrics serves the local processes' metrics as the bundle does
	// (HTTPS, a token that may get /metrics); the harness reads its own
	// replicas' metrics over plain HTTP.
	SecureMetrics bool
	// bin is csv-cleaner built from this checkout for the local processes.
	bin   string
	name  string // of the processes' logs
	procs []*cleanerProcess
	seq   int
}

type cleanerProcess struct {
	*controlplane.Process
	metrics, probe string
}

// Cleaner returns the csv-cleaner of the cluster. On the local cluster it
// builds csv-cleaner from this checkout and runs none yet.
func (c *Cluster) Cleaner(ctx context.Context) (*Cleaner, error) {
	cl := &Cleaner{c: c, Namespace: envOr(EnvCleanerNamespace, "csv-cleaner"), Deployment: envOr(EnvCleanerDeployment, "csv-cleaner")}
	if !c.Local() {
		dep := &appsv1.Deployment{}
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: cl.Namespace, Name: cl.Deployment}, dep); err != nil {
			return nil, fmt.Errorf("finding csv-cleaner's Deployment %s/%s (set %s and %s): %w",
				cl.Namespace, cl.Deployment, EnvCleanerNamespace, EnvCleanerDeployment, err)
		}
		return cl, nil
	}
	if err := client.IgnoreAlreadyExists(c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cl.Namespace}})); err != nil {
		return nil, fmt.Errorf("creating namespace %s: %w", cl.Namespace, err)
	}
	cl.bin = filepath.Join(c.LogDir, "csv-cleaner")
	return cl, build(cl.bin, "./cmd/csv-cleaner")
}

// As returns another local csv-cleaner, built from the same checkout, whose
// processes (logs name-N.log) authenticate with kubeconfig, keep their
// leader election lease in namespace and get env: csv-cleaner as OLM runs it
// from its bundle, metrics served securely. It runs none yet.
func (cl *Cleaner) As(name, kubeconfig, namespace string, env ...string) *Cleaner {
	return &Cleaner{c: cl.c, bin: cl.bin, name: name, Namespace: namespace, Deployment: cl.Deployment, Kubeconfig: kubeconfig, Env: env, SecureMetrics: true}
}

// Binary is csv-cleaner built from this checkout, as the local processes run
// it ("" on an existing cluster): its subcommands (plan, undo) run from it.
func (cl *Cleaner) Binary() string { return cl.bin }

// Logs returns what the local processes logged so far.
func (cl *Cleaner) Logs() (string, error) {
	var b strings.Builder
	for i := 1; i <= cl.seq; i++ {
		raw, err := os.ReadFile(filepath.Join(cl.c.LogDir, fmt.Sprintf("%s-%d.log", cmp.Or(cl.name, "csv-cleaner"), i)))
		if err != nil {
			return "", fmt.Errorf("reading a csv-cleaner log: %w", err)
		}
		b.Write(raw)
	}
	return b.String(), nil
}

// Scale runs n replicas of csv-cleaner and returns once they are ready:
// locally, it stops processes with SIGTERM (newest first) or starts new
// ones, and replaces any that exited.
func (cl *Cleaner) Scale(ctx context.Context, n int) error {
	if !cl.c.Local() {
		return cl.scaleDeployment(ctx, n)
	}
	// A replica that exited is replaced, as the kubelet restarts a container.
	cl.procs = slices.DeleteFunc(cl.procs, func(p *cleanerProcess) bool { return p.Exited() })
	var errs []error
	for len(cl.procs) > n {
		p := cl.procs[len(cl.procs)-1]
		cl.procs = cl.procs[:len(cl.procs)-1]
		if err := p.Stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	for len(cl.procs) < n {
		p, err := cl.start()
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		cl.procs = append(cl.procs, p)
	}
	for _, p := range cl.procs {
		if err := p.waitReady(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (cl *Cleaner) start() (*cleanerProcess, error) {
	ports, err := controlplane.FreePorts(2)
	if err != nil {
		return nil, err
	}
	cl.seq++
	p := &cleanerProcess{metrics: "127.0.0.1:" + strconv.Itoa(ports[0]), probe: "127.0.0.1:" + strconv.Itoa(ports[1])}
	args := []string{
		"--kubeconfig=" + cmp.Or(cl.Kubeconfig, cl.c.Kubeconfig),
		"--metrics-bind-address=" + p.metrics, "--metrics-secure=" + strconv.FormatBool(cl.SecureMetrics), "--health-probe-bind-address=" + p.probe,
		"--leader-elect", "--leader-election-namespace=" + cl.Namespace,
		// A standby takes over within 4 s of a crashed leader's last renewal.
		"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms",
	}
	if cl.Kubeconfig == "" {
		args = append(args, "--operand-role=") // the cluster's admin: no operand role to bind
	}
	args = append(args, cl.Args...)
	p.Process, err = cl.c.startProcess(fmt.Sprintf("%s-%d", cmp.Or(cl.name, "csv-cleaner"), cl.seq), cl.bin, args, cl.Env)
	return p, err
}

func (p *cleanerProcess) waitReady(ctx context.Context) error {
	err := controlplane.WaitFor(ctx, time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("%s exited", p.Name)
		}
		code, _, err := controlplane.HTTPGet(ctx, "http://"+p.probe+"/readyz")
		return err == nil && code == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to be ready (see %s.log): %w", p.Name, p.Name, err)
	}
	return nil
}

// leader reports whether the process holds the lease, from its metrics.
func (p *cleanerProcess) leader(ctx context.Context) bool {
	code, body, err := controlplane.HTTPGet(ctx, "http://"+p.metrics+"/metrics")
	if err != nil || code != http.StatusOK {
		return false
	}
	want := `leader_election_master_status{name="` + LeaseName + `"} 1`
	return slices.Contains(strings.Split(body, "\n"), want)
}

// MetricsURLs are the local replicas' metrics endpoints.
func (cl *Cleaner) MetricsURLs() []string {
	scheme := "http"
	if cl.SecureMetrics {
		scheme = "https"
	}
	var out []string
	for _, p := range cl.procs {
		out = append(out, scheme+"://"+p.metrics+"/metrics")
	}
	return out
}

// Exited counts the local replicas that exited since the last Scale.
func (cl *Cleaner) Exited() int {
	n := 0
	for _, p := range cl.procs {
		if p.Exited() {
			n++
		}
	}
	return n
}

// Crash kills every replica at once, without a chance to clean up: SIGKILL
// locally, pods deleted with no grace period on an existing cluster (where
// the Deployment starts new ones).
func (cl *Cleaner) Crash(ctx context.Context) error {
	if !cl.c.Local() {
		return cl.c.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(cl.Namespace),
			client.MatchingLabels(cl.podLabels(ctx)), client.GracePeriodSeconds(0))
	}
	for _, p := range cl.procs {
		p.Kill()
	}
	cl.procs = nil
	return nil
}

// KillLeader waits until one replica holds the lease and kills it with no
// grace: the other replicas must take over. It returns the leader's name.
func (cl *Cleaner) KillLeader(ctx context.Context) (string, error) {
	name, err := cl.Leader(ctx)
	if err != nil {
		return "", err
	}
	if !cl.c.Local() {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: cl.Namespace, Name: name}}
		return name, cl.c.Client.Delete(ctx, pod, client.GracePeriodSeconds(0))
	}
	i := slices.IndexFunc(cl.procs, func(p *cleanerProcess) bool { return p.Name == name })
	cl.procs[i].Kill()
	cl.procs = slices.Delete(cl.procs, i, i+1)
	return name, nil
}

// Leader waits until a replica holds the lease and returns its name: the
// process's locally, from its metrics; the pod's on an existing cluster,
// from the Lease (controller-runtime's identity is <hostname>_<uuid>, and a
// pod's hostname is its name).
func (cl *Cleaner) Leader(ctx context.Context) (string, error) {
	var name string
	err := controlplane.WaitFor(ctx, time.Minute, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if !cl.c.Local() {
			lease := &coordinationv1.Lease{}
			if err := cl.c.Client.Get(ctx, client.ObjectKey{Namespace: cl.Namespace, Name: LeaseName}, lease); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if lease.Spec.HolderIdentity != nil {
				name, _, _ = strings.Cut(*lease.Spec.HolderIdentity, "_")
			}
			return name != "", nil
		}
		for _, p := range cl.procs {
			if p.leader(ctx) {
				name = p.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("waiting for a csv-cleaner leader: %w", err)
	}
	return name, nil
}

func (cl *Cleaner) podLabels(ctx context.Context) map[string]string {
	dep := &appsv1.Deployment{}
	if err := cl.c.Client.Get(ctx, client.ObjectKey{Namespace: cl.Namespace, Name: cl.Deployment}, dep); err != nil || dep.Spec.Selector == nil {
		return map[string]string{"app.kubernetes.io/name": "csv-cleaner"}
	}
	return dep.Spec.Selector.MatchLabels
}

// scaleDeployment sets the Deployment's scale subresource and waits until
// exactly n replicas are ready and no others run.
func (cl *Cleaner) scaleDeployment(ctx context.Context, n int) error {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: cl.Namespace, Name: cl.Deployment}}
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: int32(n)}}
	if err := cl.c.Client.SubResource("scale").Update(ctx, dep, client.WithSubResourceBody(scale)); err != nil {
		return fmt.Errorf("scaling %s/%s to %d: %w", cl.Namespace, cl.Deployment, n, err)
	}
	return controlplane.WaitFor(ctx, 3*time.Minute, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := cl.c.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
			return false, err
		}
		pods := &corev1.PodList{}
		if err := cl.c.Client.List(ctx, pods, client.InNamespace(cl.Namespace), client.MatchingLabels(cl.podLabels(ctx))); err != nil {
			return false, err
		}
		st := dep.Status
		return st.ObservedGeneration == dep.Generation && int(st.ReadyReplicas) == n && int(st.Replicas) == n && len(pods.Items) == n, nil
	})
}
