package feed

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/clawpit/clawpit/core"
)

var (
	tsType      = reflect.TypeOf(core.Timestamp(0))
	rawJSONType = reflect.TypeOf(json.RawMessage(nil))
)

// Fields lists every JSON field of an entity struct (pointer), in
// declaration order, with its value as text: timestamps carry TS, absent
// values print as "null" like the CLI's JSON.
func Fields(v any) []Field {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	rt := rv.Type()
	out := make([]Field, 0, rt.NumField())
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, fieldOf(name, rv.Field(i)))
	}
	return out
}

func fieldOf(name string, fv reflect.Value) Field {
	f := Field{Name: name}
	switch {
	case fv.Type() == tsType:
		f.TS = core.Timestamp(fv.Int())
		f.Value = f.TS.String()
		if f.TS == 0 {
			f.Value = "null"
		}
	case fv.Kind() == reflect.Pointer:
		if fv.IsNil() {
			f.Value = "null"
		} else {
			f.Value = fmt.Sprint(fv.Elem().Interface())
		}
	case fv.Type() == rawJSONType:
		// JSON kept as sent (an approval's suggestions): its text, not its
		// bytes' numbers.
		f.Value = string(fv.Bytes())
		if f.Value == "" {
			f.Value = "null"
		}
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
		f.Value = core.CommandLine(fv.Interface().([]string))
	default:
		f.Value = fmt.Sprint(fv.Interface())
	}
	return f
}
