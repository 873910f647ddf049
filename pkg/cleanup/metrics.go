package cleanup

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	uninstalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "csv_cleaner_uninstalls_total",
		Help: "Uninstalls that ended, by result: completed, or skipped_<reason>.",
	}, []string{"result"})
	blockedTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "csv_cleaner_uninstall_blocked_total",
		Help: "Times an uninstall became Blocked, by reason.",
	}, []string{"reason"})
	operandsDeleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "csv_cleaner_operand_deletes_total",
		Help: "Delete requests csv-cleaner issued for operands.",
	})
	recordUnwritable = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "csv_cleaner_record_unwritable_total",
		Help: "Uninstalls that went on without a CSVCleanup record because their namespace was terminating.",
	})
)

func init() {
	metrics.Registry.MustRegister(uninstalls, blockedTransitions, operandsDeleted, recordUnwritable)
}
