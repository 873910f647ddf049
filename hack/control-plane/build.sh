#!/usr/bin/env bash
# Builds the local control plane from source through the Go module proxy into
# the folder given as $1: by default etcd, kube-apiserver and
# kube-controller-manager; name olm, catalog, opm and kwok to build those too
# (the end-to-end tests' cluster), and kubectl-operator and operator-sdk (what
# the benchmarks compare csv-cleaner with), and catalogd and operator-controller
# (OLM v1, for its end-to-end test), and velero, velero-plugin-for-aws and
# versitygw (Velero, its AWS plugin and an S3 gateway, for the backup gate's
# end-to-end test), and csi-provisioner, snapshot-controller and
# csi-snapshotter (the CSI stack whose snapshots hold the volumes' data). A
# binary already present is never rebuilt.
set -euo pipefail

out=$(cd "${1:?usage: build.sh BIN_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
k8s_version=v1.37.1

export CGO_ENABLED=0

build() { # name, module dir, package, ldflags, build tags
	local name=$1 dir=$2 pkg=$3 ldflags=${4:-} tags=${5:-}
	if [[ -x "$out/$name" ]]; then
		echo "control-plane: $name is already built ($out/$name)"
		return
	fi
	echo "control-plane: building $name from $pkg (a cold build takes minutes) ..."
	local start=$SECONDS
	(cd "$here/$dir" && go build -trimpath -tags "$tags" -ldflags "-s -w $ldflags" -o "$out/$name.tmp" "$pkg")
	mv "$out/$name.tmp" "$out/$name"
	echo "control-plane: built $name in $((SECONDS - start))s"
}

k8s_ldflags=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	minor=${k8s_version#v1.}
	minor=${minor%%.*}
	k8s_ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done

shift
components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=(etcd kube-apiserver kube-controller-manager)
for c in "${components[@]}"; do
	case $c in
	etcd) build etcd etcd go.etcd.io/etcd/server/v3 ;;
	kube-apiserver) build kube-apiserver kubernetes k8s.io/kubernetes/cmd/kube-apiserver "$k8s_ldflags" ;;
	kube-controller-manager) build kube-controller-manager kubernetes k8s.io/kubernetes/cmd/kube-controller-manager "$k8s_ldflags" ;;
	olm) build olm olm github.com/operator-framework/operator-lifecycle-manager/cmd/olm ;;
	catalog) build catalog olm github.com/operator-framework/operator-lifecycle-manager/cmd/catalog ;;
	# opm serves file-based catalogs; its sqlite driver needs cgo.
	opm) CGO_ENABLED=1 build opm opm github.com/operator-framework/operator-registry/cmd/opm "" json1,containers_image_openpgp ;;
	kwok) build kwok kwok sigs.k8s.io/kwok/cmd/kwok ;;
	kubectl-operator) build kubectl-operator kubectl-operator github.com/operator-framework/kubectl-operator ;;
	operator-sdk) build operator-sdk operator-sdk github.com/operator-framework/operator-sdk/cmd/operator-sdk ;;
	# OLM v1 (v1.5.1); containers_image_openpgp keeps gpgme (cgo) out, as upstream builds it.
	catalogd) build catalogd operator-controller github.com/operator-framework/operator-controller/cmd/catalogd "" containers_image_openpgp ;;
	operator-controller) build operator-controller operator-controller github.com/operator-framework/operator-controller/cmd/operator-controller "" containers_image_openpgp ;;
	# Velero (v1.18.3) with its AWS plugin (v1.14.3), and an S3 gateway (versitygw v1.8.0).
	velero) build velero velero github.com/vmware-tanzu/velero/cmd/velero "-X github.com/vmware-tanzu/velero/pkg/buildinfo.Version=v1.18.3" ;;
	velero-plugin-for-aws) build velero-plugin-for-aws velero-plugin-for-aws github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws ;;
	versitygw) build versitygw versitygw github.com/versity/versitygw/cmd/versitygw ;;
	# The CSI stack: external-provisioner v6.4.0 and external-snapshotter v8.7.0.
	csi-provisioner) build csi-provisioner csi-provisioner github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner ;;
	snapshot-controller) build snapshot-controller csi-snapshotter github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller ;;
	csi-snapshotter) build csi-snapshotter csi-snapshotter github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter ;;
	*) echo "control-plane: unknown component $c" >&2; exit 2 ;;
	esac
done
echo "control-plane: ${components[*]} ready in $out"
