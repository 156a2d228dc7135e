package summary

import (
	"reflect"
	"testing"
)

// TestOutcomesAddSumsEveryCount: each count of Outcomes (by reflection, so a
// count added later is held too) is summed by Add, the retries allowed are the
// larger, the maps are summed key by key, and a part with no map leaves it nil.
func TestOutcomesAddSumsEveryCount(t *testing.T) {
	var part Outcomes
	v := reflect.ValueOf(&part).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Int64 {
			f.SetInt(int64(i + 1))
		}
	}
	part.RetryMax = 3
	part.ByState = map[string]int64{"DELIVERED": 2}
	part.Refused = map[string]int64{"429": 1}

	var whole Outcomes
	whole.Add(Outcomes{RetryMax: 5})
	if whole.ByState != nil || whole.Refused != nil {
		t.Errorf("a part without maps made them: %v %v", whole.ByState, whole.Refused)
	}
	whole.Add(part)
	whole.Add(part)
	w := reflect.ValueOf(whole)
	for i := range w.NumField() {
		if f := w.Field(i); f.Kind() == reflect.Int64 && f.Int() != 2*int64(i+1) {
			t.Errorf("%s = %d after two parts of %d", w.Type().Field(i).Name, f.Int(), i+1)
		}
	}
	if whole.RetryMax != 5 {
		t.Errorf("retry_max = %d, want the larger, 5", whole.RetryMax)
	}
	if whole.ByState["DELIVERED"] != 4 || whole.Refused["429"] != 2 {
		t.Errorf("maps %v %v, want DELIVERED 4 and 429 2", whole.ByState, whole.Refused)
	}
}
