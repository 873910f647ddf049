package cleanup

import (
	"github.com/csv-cleaner/csv-cleaner/pkg/refusal"
	"github.com/csv-cleaner/csv-cleaner/pkg/transient"
)

// Retry retries csv-cleaner's requests in place while they fail
// transiently (transient.DefaultBackoff), counting each retry in
// csv_cleaner_client_retries_total. A refusal (ClassifyRefusal) is never
// retried in place, not even a 500 that names a webhook which cannot be
// called: it comes back the same until someone acts, and blocks the
// uninstall at once instead.
var Retry = transient.Retrier{
	Permanent: func(err error) bool { _, refused := refusal.Classify(err); return refused },
	OnRetry:   func(verb string, _ error) { clientRetries.WithLabelValues(verb).Inc() },
}
