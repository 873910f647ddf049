package envtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ocv1 "github.com/operator-framework/operator-controller/api/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cleanupv1alpha1 "github.com/csv-cleaner/csv-cleaner/api/v1alpha1"
	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
	"github.com/csv-cleaner/csv-cleaner/test/faultproxy"
)

// releasePatch matches the PATCH of the object at path (a CSV's or a
// ClusterExtension's) that removes csv-cleaner's finalizer from it: the
// release, an uninstall's last write before its record says Completed.
func releasePatch(path string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, path) || r.Body == nil {
			return false
		}
		body, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return false
		}
		var p struct {
			Metadata map[string]json.RawMessage `json:"metadata"`
		}
		if json.Unmarshal(body, &p) != nil {
			return false
		}
		in, ok := p.Metadata["finalizers"]
		var list []string
		return ok && json.Unmarshal(in, &list) == nil && !slices.Contains(list, decide.DefaultFinalizer)
	}
}

// killedAtRelease runs an owner's uninstall under a csv-cleaner that is
// SIGKILLed exactly between its release of the owner (done, its reply not
// yet read) and its record's Completed, then starts another csv-cleaner
// and returns how long it took to say Completed. uninstall deletes the
// owner; phase reads its record's phase; released says that csv-cleaner's
// finalizer is off the owner (or the owner is gone).
type killedAtRelease struct {
	self      types.NamespacedName
	path      string
	uninstall func(ctx context.Context)
	phase     func(ctx context.Context) string
	released  func(ctx context.Context) bool
}

func (k killedAtRelease) run(ctx context.Context, id string, proxy *faultproxy.Proxy, kubeconfig string) time.Duration {
	GinkgoHelper()
	p := startCleanerOn(ctx, id+"-a", k.self, kubeconfig)
	p.waitLeads(ctx)
	lift := proxy.Add(faultproxy.Rule{Match: releasePatch(k.path), Fault: faultproxy.LostReplyReset, Times: 1, Then: p.Kill})
	defer lift()
	k.uninstall(ctx)
	Eventually(p.Exited).WithContext(ctx).Should(BeTrue(), "csv-cleaner is killed at the release")
	Expect(k.released(ctx)).To(BeTrue(), "the release was done")
	Expect(k.phase(ctx)).To(Equal(string(cleanupv1alpha1.PhaseReleasing)), "the record was not written after the release")

	began := time.Now()
	next := startCleaner(ctx, id+"-b", k.self)
	Eventually(k.phase).WithContext(ctx).WithTimeout(time.Minute).Should(Equal(string(cleanupv1alpha1.PhaseCompleted)),
		func() string {
			return "the next csv-cleaner's log ends:\n" + logTail(filepath.Join(cp.LogDir, id+"-b.log"), 60)
		})
	took := time.Since(began)
	Expect(next.Stop(30 * time.Second)).To(Succeed())
	return took
}

var _ = Describe("A record never stays Releasing", Ordered, func() {
	// The in-process csv-cleaner of the other specs would complete the
	// records (the suite starts it again after every spec).
	BeforeEach(scaleToZero)

	var (
		proxy      *faultproxy.Proxy
		kubeconfig string
	)
	BeforeAll(func() {
		var err error
		proxy, err = faultproxy.Start(cp.Config, uint64(GinkgoRandomSeed()))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(proxy.Close)
		kubeconfig = filepath.Join(GinkgoT().TempDir(), "proxy.kubeconfig")
		Expect(proxy.WriteKubeconfig(kubeconfig)).To(Succeed())
	})

	// Each owner is uninstalled three times gone once released and three
	// times still held by another's finalizer after it.
	const kills = 6
	report := func(owner string, took []time.Duration) {
		AddReportEntry("killed between the release and the record: "+owner,
			fmt.Sprintf("%d kills, %d records Completed, %s to %s after the next start", kills, len(took), slices.Min(took).Round(time.Millisecond), slices.Max(took).Round(time.Millisecond)))
	}

	It("completes a CSV's record, whether the CSV is gone or held by others' finalizers", func(ctx SpecContext) {
		self := types.NamespacedName{Namespace: "cc-relkill", Name: "csv-cleaner.v0.1.0"}
		selfCSV(ctx, self, "")
		var took []time.Duration
		for i := range kills {
			s := installed(ctx, fmt.Sprintf("relkill-%d", i))
			held := i%2 == 1
			k := killedAtRelease{self: self, path: "/clusterserviceversions/" + s.install.CSVName,
				uninstall: func(ctx context.Context) {
					s.waitFinalizer(ctx)
					if held {
						csv, err := s.getCSV(ctx)
						Expect(err).NotTo(HaveOccurred())
						base := csv.DeepCopy()
						csv.Finalizers = append(csv.Finalizers, holdFinalizer)
						Expect(k8s.Patch(ctx, csv, client.MergeFrom(base))).To(Succeed())
						DeferCleanup(func(ctx SpecContext) { dropFinalizers(ctx, csv) })
					}
					s.deleteCSV(ctx)
				},
				phase: func(ctx context.Context) string {
					phase, _, _ := strings.Cut(s.phase(ctx), "/") // phase/reason
					return phase
				},
				released: func(ctx context.Context) bool {
					return !slices.Contains(s.finalizers(ctx), decide.DefaultFinalizer)
				},
			}
			took = append(took, k.run(ctx, fmt.Sprintf("relkill-csv-%d", i), proxy, kubeconfig))
			if !held {
				s.csvGone(ctx)
			}
			Expect(s.record(ctx).Status.CSVUID).NotTo(BeEmpty())
		}
		report("CSV", took)
	})

	It("completes a ClusterExtension's record, whether it is gone or held by operator-controller's finalizers", func(ctx SpecContext) {
		self := types.NamespacedName{Namespace: "cc-relkill-x", Name: "csv-cleaner.v0.1.0"}
		selfCSV(ctx, self, "")
		var took []time.Duration
		for i := range kills {
			s := newExtScenario(fmt.Sprintf("relkill-%d", i))
			s.createPolicy(ctx)
			held := i%2 == 1
			k := killedAtRelease{self: self, path: "/clusterextensions/" + s.ext.Name,
				uninstall: func(ctx context.Context) {
					s.create(ctx)
					if held {
						s.deleteExtension(ctx, nil)
						DeferCleanup(func(ctx SpecContext) { s.dropOLMFinalizers(ctx) })
						return
					}
					s.deleteAsOperatorController(ctx, nil)
				},
				phase: s.phase,
				released: func(ctx context.Context) bool {
					return !slices.Contains(s.finalizers(ctx), decide.DefaultFinalizer)
				},
			}
			took = append(took, k.run(ctx, fmt.Sprintf("relkill-ext-%d", i), proxy, kubeconfig))
			if held {
				ext := &ocv1.ClusterExtension{}
				Expect(k8s.Get(ctx, client.ObjectKey{Name: s.ext.Name}, ext)).To(Succeed(), "operator-controller's finalizers hold it")
			} else {
				Eventually(s.finalizers).WithContext(ctx).Should(BeNil(), "the extension is gone")
			}
		}
		report("ClusterExtension", took)
	})
})

// logTail is the first line (csv-cleaner's settings) and the last n lines
// of the file at path, or why it cannot be read.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) <= n+1 {
		return strings.Join(lines, "\n")
	}
	return lines[0] + "\n...\n" + strings.Join(lines[len(lines)-n:], "\n")
}
