package plan

import "strings"

// Problem is bad input that blocks an uninstall until someone fixes it.
type Problem struct {
	Reason  string
	Object  string
	Message string
}

func (p Problem) Error() string { return p.Message }

// JoinProblems reports several problems as one, under the first one's
// reason, naming every object.
func JoinProblems(ps []Problem) *Problem {
	if len(ps) == 1 {
		return &ps[0]
	}
	objs, msgs := make([]string, 0, len(ps)), make([]string, 0, len(ps))
	for _, p := range ps {
		objs = append(objs, p.Object)
		msgs = append(msgs, p.Message)
	}
	return &Problem{Reason: ps[0].Reason, Object: strings.Join(objs, ", "), Message: strings.Join(msgs, "; ")}
}

// AsError is the problem as an error; nil when there is none.
func AsError(p *Problem) error {
	if p == nil {
		return nil
	}
	return p
}
