package arch

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Lines counts the lines of the Go files under each of roots (relative to
// root), test files left out: by directory (relative to root), by
// top-level folder under pkg/ ("pkg/decide" counts pkg/decide/olmv1's
// too), and in all.
func Lines(root string, roots ...string) (byDir, byFolder map[string]int, total int, _ error) {
	byDir, byFolder = map[string]int{}, map[string]int{}
	for _, r := range roots {
		err := filepath.WalkDir(filepath.Join(root, r), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n := bytes.Count(raw, []byte("\n"))
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			dir := filepath.ToSlash(rel)
			byDir[dir] += n
			if parts := strings.Split(dir, "/"); len(parts) >= 2 && parts[0] == "pkg" {
				byFolder["pkg/"+parts[1]] += n
			}
			total += n
			return nil
		})
		if err != nil {
			return nil, nil, 0, err
		}
	}
	return byDir, byFolder, total, nil
}
