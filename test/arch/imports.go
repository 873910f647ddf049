package arch

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Imports reads the module's imports of its own packages from the Go
// files under each of roots (relative to the module's root), test files
// left out, whatever their build tags: directory to imported directories
// (relative to the module), sorted.
func Imports(root string, roots ...string) (map[string][]string, error) {
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, r := range roots {
		err := filepath.WalkDir(filepath.Join(root, r), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				return fmt.Errorf("reading the imports of %s: %w", path, err)
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			dir := filepath.ToSlash(rel)
			if _, ok := out[dir]; !ok {
				out[dir] = nil
			}
			for _, spec := range f.Imports {
				p, err := strconv.Unquote(spec.Path.Value)
				if err != nil {
					return err
				}
				if to, ok := strings.CutPrefix(p, Module+"/"); ok && to != dir && !slices.Contains(out[dir], to) {
					out[dir] = append(out[dir], to)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for d := range out {
		slices.Sort(out[d])
	}
	return out, nil
}
