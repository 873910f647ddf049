package cluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// bindPods stands in for kube-scheduler on the local cluster: it binds every
// pod that has no node to the kwok node, until ctx ends. Pods OLM creates
// from a bundle's Deployment (csv-cleaner's own) name no node.
func (c *Cluster) bindPods(ctx context.Context) {
	log := logf.FromContext(ctx).WithName("scheduler")
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		pods := &corev1.PodList{}
		if err := c.Client.List(ctx, pods, client.MatchingFields{"spec.nodeName": ""}); err == nil {
			for i := range pods.Items {
				pod := &pods.Items[i]
				if pod.DeletionTimestamp != nil {
					continue
				}
				binding := &corev1.Binding{
					ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
					Target:     corev1.ObjectReference{Kind: "Node", Name: c.NodeName},
				}
				if err := c.Client.SubResource("binding").Create(ctx, pod, binding); err != nil && ctx.Err() == nil {
					log.V(1).Info("Binding a pod failed; retrying", "pod", client.ObjectKeyFromObject(pod), "error", err.Error())
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
