package refusal

import (
	"context"

	"github.com/csv-cleaner/csv-cleaner/pkg/decide"
)

// Operator is whether an uninstall's operator is unavailable, read at most
// once (a pass of the run, one plan) and only when a refusal needs it: a
// conversion webhook that fails, a webhook that refuses the deletes.
type Operator struct {
	// Unavailable says why the operator is unavailable, nil while it runs;
	// nil: it is taken as running.
	Unavailable func(context.Context) (*decide.Problem, error)
	problem     *decide.Problem
	read        bool
}

// Gone reads, the first time, why the operator is unavailable (nil while
// it runs), and returns the same afterwards.
func (o *Operator) Gone(ctx context.Context) (*decide.Problem, error) {
	if o.read || o.Unavailable == nil {
		return o.problem, nil
	}
	p, err := o.Unavailable(ctx)
	if err != nil {
		return nil, err
	}
	o.problem, o.read = p, true
	return p, nil
}
