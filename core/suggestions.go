package core

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
)

// An agent in --gate-on ask mode can suggest permission updates with its
// question (Claude Code hooks: PermissionRequest permission_suggestions,
// e.g. {"type": "addDirectories", "directories": [...], "destination":
// "session"}). clawpit records them on the approval, shows them exactly,
// and an operator may approve "with suggestion N": the hook then answers
// allow with that suggestion as updatedPermissions, so the agent applies it
// and does not ask again for what it covers (issue 28).

// Limits on recorded suggestions: more is not something an operator can
// read in a dialog (and the payload is the agent's, so it is bounded).
const (
	MaxSuggestions     = 16
	MaxSuggestionBytes = 16 << 10 // the whole array, bytes
)

// CheckSuggestions returns raw compacted when it is a JSON array of at most
// MaxSuggestions objects in at most MaxSuggestionBytes; nil for an absent,
// null or empty one. Errors wrap ErrInvalid.
func CheckSuggestions(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if len(raw) > MaxSuggestionBytes {
		return nil, Invalidf("permission suggestions: %d bytes, at most %d", len(raw), MaxSuggestionBytes)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, Invalidf("permission suggestions are not a JSON array: %v", err)
	}
	if len(items) == 0 {
		return nil, nil
	}
	if len(items) > MaxSuggestions {
		return nil, Invalidf("permission suggestions: %d, at most %d", len(items), MaxSuggestions)
	}
	for i, it := range items {
		if t := bytes.TrimSpace(it); len(t) == 0 || t[0] != '{' {
			return nil, Invalidf("permission suggestion %d is not a JSON object", i+1)
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, Invalidf("permission suggestions: %v", err)
	}
	return b.Bytes(), nil
}

// SuggestionList splits an approval's Suggestions into its objects, as
// recorded (nil when none or unreadable).
func SuggestionList(raw json.RawMessage) []json.RawMessage {
	var items []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &items) != nil {
		return nil
	}
	return items
}

// ChosenSuggestion is the suggestion a was approved with (1-based
// a.Suggestion), nil when none.
func (a *Approval) ChosenSuggestion() json.RawMessage {
	items := SuggestionList(a.Suggestions)
	if a.Status != ApprovalApproved || a.Suggestion < 1 || a.Suggestion > len(items) {
		return nil
	}
	return items[a.Suggestion-1]
}

// ApproveWithSuggestion approves a pending approval once with its
// suggestion n (1-based, as `approval show` numbers them): the waiting hook
// answers allow with it as the agent's updatedPermissions. n = 0 is
// ApproveApproval with scope once. Errors: ErrInvalid for an n the approval
// does not offer; refusals as ApproveApproval's.
func (r *Registry) ApproveWithSuggestion(ctx context.Context, id string, n int, actor Actor) (*Approval, Result, error) {
	if n == 0 {
		a, _, res, err := r.ApproveApproval(ctx, id, ScopeOnce, actor)
		return a, res, err
	}
	a, res, err := r.approvalOp(ctx, id, func(tx Tx, a *Approval, now Timestamp) (Result, error) {
		if ok, res, err := r.decidable(tx, a, ApprovalApproved, actor, now); !ok {
			return res, err
		}
		items := SuggestionList(a.Suggestions)
		if n < 1 || n > len(items) {
			return Result{}, Invalidf("approval %s offers %d suggestion(s); there is no suggestion %d", a.ID, len(items), n)
		}
		a.Suggestion = n
		reason := "approved (once, with suggestion " + strconv.Itoa(n) + ": " + string(items[n-1]) + ")"
		return applied(""), r.resolveApproval(tx, a, approvalDecision{to: ApprovalApproved, scope: ScopeOnce, reason: reason,
			decidedBy: string(actor)}, actor, now, nil)
	})
	if err != nil {
		return nil, Result{}, err
	}
	return a, res, nil
}
