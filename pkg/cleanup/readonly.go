package cleanup

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errReadOnly is what any write through a readOnly client returns.
var errReadOnly = errors.New("csv-cleaner plan only reads: a write was refused")

// readOnly is a client whose every write fails, so that a dry run cannot
// change the cluster even if a code path it shares with the controller tries.
type readOnly struct{ client.Client }

func (readOnly) Create(context.Context, client.Object, ...client.CreateOption) error {
	return errReadOnly
}
func (readOnly) Delete(context.Context, client.Object, ...client.DeleteOption) error {
	return errReadOnly
}
func (readOnly) Update(context.Context, client.Object, ...client.UpdateOption) error {
	return errReadOnly
}
func (readOnly) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return errReadOnly
}
func (readOnly) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return errReadOnly
}
func (readOnly) DeleteAllOf(context.Context, client.Object, ...client.DeleteAllOfOption) error {
	return errReadOnly
}
func (readOnly) Status() client.SubResourceWriter            { return readOnlySub{} }
func (readOnly) SubResource(string) client.SubResourceClient { return readOnlySub{} }

type readOnlySub struct{}

func (readOnlySub) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return errReadOnly
}
func (readOnlySub) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return errReadOnly
}
func (readOnlySub) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return errReadOnly
}
func (readOnlySub) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return errReadOnly
}
func (readOnlySub) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return errReadOnly
}
