#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager)
# from source through the Go module proxy into the folder given as $1.
# A binary already present is never rebuilt.
set -euo pipefail

out=$(cd "${1:?usage: build.sh BIN_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
k8s_version=v1.37.1

export CGO_ENABLED=0

build() { # name, module dir, package, ldflags
	local name=$1 dir=$2 pkg=$3 ldflags=${4:-}
	if [[ -x "$out/$name" ]]; then
		echo "control-plane: $name is already built ($out/$name)"
		return
	fi
	echo "control-plane: building $name from $pkg (a cold build takes minutes) ..."
	local start=$SECONDS
	(cd "$here/$dir" && go build -trimpath -ldflags "-s -w $ldflags" -o "$out/$name.tmp" "$pkg")
	mv "$out/$name.tmp" "$out/$name"
	echo "control-plane: built $name in $((SECONDS - start))s"
}

k8s_ldflags=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	minor=${k8s_version#v1.}
	minor=${minor%%.*}
	k8s_ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done

build etcd etcd go.etcd.io/etcd/server/v3
build kube-apiserver kubernetes k8s.io/kubernetes/cmd/kube-apiserver "$k8s_ldflags"
build kube-controller-manager kubernetes k8s.io/kubernetes/cmd/kube-controller-manager "$k8s_ldflags"
echo "control-plane: ready in $out"
