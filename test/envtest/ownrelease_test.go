package envtest_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/csv-cleaner/csv-cleaner/pkg/owninstall"
	"github.com/csv-cleaner/csv-cleaner/pkg/rbac"
	"github.com/csv-cleaner/csv-cleaner/test/fixtures"
)

var _ = Describe("csv-cleaner's own cluster RBAC, released with only the rights OLM gave it", func() {
	It("is released whole, and OLM may let its CSV go, even when csv-cleaner never bound itself a second time", func(ctx SpecContext) {
		const name, user = "own-release", "csv-cleaner-own-release"
		self := types.NamespacedName{Namespace: "own-release", Name: "csv-cleaner.v9"}
		labels := fixtures.OwnedClusterRole(name, self).Labels // OLM's owner labels

		// No csv-cleaner runs beside: the one the suite runs would release
		// the hold of a CSV that does not exist, whatever this one did.
		stopManager()

		By("making csv-cleaner's ClusterRole (the shipped rules) and OLM's binding of it, both held, and no self binding")
		role := shippedRole()
		role.ObjectMeta = metav1.ObjectMeta{Name: name, Labels: labels, Finalizers: []string{rbac.HoldFinalizer}}
		Expect(k8s.Create(ctx, role)).To(Succeed())
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Finalizers: []string{rbac.HoldFinalizer}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		Expect(k8s.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			releaseAndDelete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}})
			releaseAndDelete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: rbac.SelfBindingName(name)}})
			releaseAndDelete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}})
		})
		// Each request of csv-cleaner's comes a moment late, as on a loaded
		// machine: by then the API server's authorizer has seen the last
		// change, and a binding released is a right gone.
		cfg := asUser(user)
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return promhttp.RoundTripperFunc(func(req *http.Request) (*http.Response, error) {
				time.Sleep(300 * time.Millisecond)
				return rt.RoundTrip(req)
			})
		}
		as, err := client.New(cfg, client.Options{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(ctx context.Context) error { return as.List(ctx, &rbacv1.ClusterRoleList{}) }).WithContext(ctx).Should(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKey{Name: rbac.SelfBindingName(name)}, &rbacv1.ClusterRoleBinding{})).To(Satisfy(apierrors.IsNotFound))

		By("deleting them as OLM does when the CSV is deleted: the hold keeps them, and the rights, in force")
		Expect(k8s.Delete(ctx, binding)).To(Succeed())
		Expect(k8s.Delete(ctx, role)).To(Succeed())

		By("releasing csv-cleaner's own RBAC as csv-cleaner, whose rights come through that binding alone")
		life := &owninstall.Life{Install: owninstall.Install{Self: self, Hold: rbac.HoldFinalizer}, Live: as, Writer: as}
		Expect(life.ReleaseOwnRBAC(ctx)).To(Succeed())
		Eventually(func(ctx context.Context) [][]string { return rbacFinalizers(ctx, name) }).WithContext(ctx).
			Should(Equal([][]string{{"gone"}, {"gone"}}), "no ClusterRole or binding of csv-cleaner's is left held: OLM waits for them to be gone before it lets the CSV go")
		Eventually(func(ctx context.Context) error {
			return k8s.Get(ctx, client.ObjectKey{Name: rbac.SelfBindingName(name)}, &rbacv1.ClusterRoleBinding{})
		}).WithContext(ctx).Should(Satisfy(apierrors.IsNotFound), "the garbage collector removes the self binding with the ClusterRole")
	})
})

// releaseAndDelete removes an object's finalizers and deletes it, if it is there.
func releaseAndDelete(ctx context.Context, o client.Object) {
	GinkgoHelper()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(o), o); apierrors.IsNotFound(err) {
		return
	}
	o.SetFinalizers(nil)
	Expect(client.IgnoreNotFound(k8s.Update(ctx, o))).To(Succeed())
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, o))).To(Succeed())
}
