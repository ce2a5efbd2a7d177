package store

import (
	"fmt"

	"github.com/clawpit/clawpit/core"
)

// InsertOperator stores o and its keys (README "Serve the console over SSH"); core.ErrConflict when the
// name or a fingerprint exists.
func (t *tx) InsertOperator(o *core.Operator) error {
	if _, err := t.insert(core.EntityOperator, o.Name,
		"INSERT INTO operators (name, role, created_by, created_at) VALUES (?, ?, ?, ?)",
		o.Name, string(o.Role), string(o.CreatedBy), int64(o.CreatedAt)); err != nil {
		return err
	}
	for _, k := range o.Keys {
		if _, err := t.insert("operator key", k.Fingerprint,
			"INSERT INTO operator_keys (fingerprint, operator, key) VALUES (?, ?, ?)",
			k.Fingerprint, o.Name, k.Line); err != nil {
			return err
		}
	}
	return nil
}

func scanOperator(r rowScanner, o *core.Operator) error {
	return r.Scan(&o.Name, &o.Role, &o.CreatedBy, &o.CreatedAt)
}

const operatorCols = "name, role, created_by, created_at"

// GetOperator returns the operator name with its keys; wrapped
// core.ErrNotFound when unknown.
func (t *tx) GetOperator(name string) (*core.Operator, error) {
	o, err := getRow(t, core.EntityOperator, name, "SELECT "+operatorCols+" FROM operators WHERE name = ?", scanOperator)
	if err != nil {
		return nil, err
	}
	if o.Keys, err = t.operatorKeys(name); err != nil {
		return nil, err
	}
	return o, nil
}

func (t *tx) operatorKeys(name string) ([]core.OperatorKey, error) {
	return queryAll(t, "SELECT fingerprint, key FROM operator_keys WHERE operator = ? ORDER BY rowid",
		[]any{name}, func(r rowScanner, k *core.OperatorKey) error { return r.Scan(&k.Fingerprint, &k.Line) })
}

// DeleteOperator removes the operator and its keys; wrapped core.ErrNotFound
// when absent.
func (t *tx) DeleteOperator(name string) error {
	if err := t.checkWritable("delete operator"); err != nil {
		return err
	}
	if _, err := t.exec("DELETE FROM operator_keys WHERE operator = ?", name); err != nil {
		return err
	}
	return t.deleteRow(core.EntityOperator, name, "DELETE FROM operators WHERE name = ?", name)
}

// ListOperators returns every operator with its keys, by name.
func (t *tx) ListOperators() ([]core.Operator, error) {
	ops, err := queryAll(t, "SELECT "+operatorCols+" FROM operators ORDER BY name", nil, scanOperator)
	if err != nil {
		return nil, err
	}
	for i := range ops {
		if ops[i].Keys, err = t.operatorKeys(ops[i].Name); err != nil {
			return nil, err
		}
	}
	return ops, nil
}

// OperatorByFingerprint returns the operator holding the key fp; wrapped
// core.ErrNotFound when none does.
func (t *tx) OperatorByFingerprint(fp string) (*core.Operator, error) {
	name, err := findRow(t, "SELECT operator FROM operator_keys WHERE fingerprint = ?", []any{fp},
		func(r rowScanner, s *string) error { return r.Scan(s) })
	if err != nil {
		return nil, fmt.Errorf("operator key %s: %w", fp, err)
	}
	if name == nil {
		return nil, core.NotFoundf("no operator with key %s", fp)
	}
	return t.GetOperator(*name)
}

var _ core.OperatorTx = (*tx)(nil)
