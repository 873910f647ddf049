package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// CompactEtcd compacts etcd's history up to its current revision, as
// kube-apiserver's compactor does every 5 minutes by default: every
// revision before it can no longer be read. It speaks to etcd's own JSON
// gateway (on by default), so that a test needs no etcd client. It returns
// the revision compacted to.
func (cp *ControlPlane) CompactEtcd(ctx context.Context) (int64, error) {
	base := cp.Env.ControlPlane.Etcd.URL.String()
	var head struct {
		Header struct {
			Revision int64 `json:"revision,string"`
		} `json:"header"`
	}
	// A range of one key gives the store's current revision in its header.
	if err := etcdPost(ctx, base+"/v3/kv/range", map[string]any{"key": "Lw==", "limit": 1}, &head); err != nil {
		return 0, err
	}
	rev := head.Header.Revision
	if rev == 0 {
		return 0, fmt.Errorf("etcd answered no revision")
	}
	if err := etcdPost(ctx, base+"/v3/kv/compaction", map[string]any{"revision": fmt.Sprint(rev), "physical": true}, nil); err != nil {
		return 0, err
	}
	return rev, nil
}

func etcdPost(ctx context.Context, url string, body any, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking etcd (%s): %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd answered %s to %s: %s", resp.Status, url, got)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(got, out)
}

// StoredAPIVersion is the apiVersion an object is stored at in etcd, read
// from etcd itself (its JSON gateway): key is the object's path under
// kube-apiserver's /registry prefix, as group/resource/namespace/name for a
// custom resource. "" when there is no such key.
func (cp *ControlPlane) StoredAPIVersion(ctx context.Context, key string) (string, error) {
	base := cp.Env.ControlPlane.Etcd.URL.String()
	var got struct {
		KVs []struct {
			Value []byte `json:"value"`
		} `json:"kvs"`
	}
	if err := etcdPost(ctx, base+"/v3/kv/range", map[string]any{"key": []byte("/registry/" + key)}, &got); err != nil {
		return "", err
	}
	if len(got.KVs) == 0 {
		return "", nil
	}
	var obj struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(got.KVs[0].Value, &obj); err != nil {
		return "", fmt.Errorf("decoding etcd's value of %s: %w", key, err)
	}
	return obj.APIVersion, nil
}
