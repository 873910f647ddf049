package decide

import (
	"reflect"
	"testing"
)

func TestConsolePlugins(t *testing.T) {
	for _, c := range []struct {
		name, annotation string
		want             []string
		wantErr          bool
	}{
		{"absent", "", nil, false},
		{"one", `["db-console"]`, []string{"db-console"}, false},
		{"two", `["a","b"]`, []string{"a", "b"}, false},
		{"an empty list", `[]`, []string{}, false},
		{"a bare name, as some authors write it", `db-console`, nil, true},
		{"a list of objects", `[{"name":"a"}]`, nil, true},
		{"an empty name", `["a",""]`, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ConsolePlugins(c.annotation)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, c.wantErr)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("names = %q, want %q", got, c.want)
			}
		})
	}
}

func TestPluginsToDisable(t *testing.T) {
	for _, c := range []struct {
		name                  string
		enabled, ours         []string
		others                map[string]bool
		wantKept, wantRemoved []string
	}{
		{"ours taken out, the others' order kept", []string{"x", "db", "y"}, []string{"db"}, nil, []string{"x", "y"}, []string{"db"}},
		{"the last one taken out", []string{"db"}, []string{"db"}, nil, []string{}, []string{"db"}},
		{"not enabled: nothing changes", []string{"x"}, []string{"db"}, nil, nil, nil},
		{"another CSV still names it: it stays", []string{"db", "x"}, []string{"db"}, map[string]bool{"db": true}, nil, nil},
		{"two of ours, one shared", []string{"a", "b", "c"}, []string{"a", "b"}, map[string]bool{"b": true}, []string{"b", "c"}, []string{"a"}},
		{"none of ours", []string{"a"}, nil, nil, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			kept, removed := PluginsToDisable(c.enabled, c.ours, c.others)
			if !reflect.DeepEqual(kept, c.wantKept) || !reflect.DeepEqual(removed, c.wantRemoved) {
				t.Errorf("kept %q, removed %q; want %q, %q", kept, removed, c.wantKept, c.wantRemoved)
			}
		})
	}
}
