package config

import (
	"errors"
	"testing"
)

func TestModSecurityValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		m  ModSecurity
		ok bool
	}{
		"engine only":          {m: ModSecurity{Engine: "On"}, ok: true},
		"every field":          {m: ModSecurity{Engine: "DetectionOnly", CRS: true, RemoveByID: []string{"1", "941000-941999"}, RemoveByTag: []string{"attack-xss"}, RequestBodyLimit: 1, RequestBodyAccess: "Off", TransactionID: "$request_id"}, ok: true},
		"no engine":            {m: ModSecurity{}},
		"engine not canonical": {m: ModSecurity{Engine: "on"}},
		"id range reversed":    {m: ModSecurity{Engine: "On", RemoveByID: []string{"2-1"}}},
		"id with a space":      {m: ModSecurity{Engine: "On", RemoveByID: []string{"1 2"}}},
		"tag with a quote":     {m: ModSecurity{Engine: "On", RemoveByTag: []string{`a"`}}},
		"tag with a newline":   {m: ModSecurity{Engine: "On", RemoveByTag: []string{"a\nInclude /x"}}},
		"body limit too large": {m: ModSecurity{Engine: "On", RequestBodyLimit: MaxModSecurityBodyLimit + 1}},
		"body access value":    {m: ModSecurity{Engine: "On", RequestBodyAccess: "on"}},
		"transaction id text":  {m: ModSecurity{Engine: "On", TransactionID: "$request_id;"}},
		"transaction id two":   {m: ModSecurity{Engine: "On", TransactionID: "$a$b"}},
		"too many removals":    {m: ModSecurity{Engine: "On", RemoveByID: make([]string, MaxModSecurityRemovals+1)}},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.m.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate = %v, want ok %t", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrModSecurity) {
				t.Errorf("error %v is not ErrModSecurity", err)
			}
		})
	}
}

// TestModSecurityProfile: the profile is the rules, not the transaction
// id nor Unavailable, and the order of removals counts.
func TestModSecurityProfile(t *testing.T) {
	base := ModSecurity{Engine: "On", CRS: true, RemoveByID: []string{"1", "2"}}
	same := base
	same.TransactionID, same.Unavailable = "$request_id", true
	if base.Profile() != same.Profile() || !ModSecurityProfileNameOK(base.Profile()) {
		t.Errorf("profiles %s and %s, want one of the form m<16 hex>", base.Profile(), same.Profile())
	}
	for name, m := range map[string]ModSecurity{
		"engine":    {Engine: "DetectionOnly", CRS: true, RemoveByID: []string{"1", "2"}},
		"crs":       {Engine: "On", RemoveByID: []string{"1", "2"}},
		"order":     {Engine: "On", CRS: true, RemoveByID: []string{"2", "1"}},
		"id as tag": {Engine: "On", CRS: true, RemoveByID: []string{"1"}, RemoveByTag: []string{"2"}},
		"limit":     {Engine: "On", CRS: true, RemoveByID: []string{"1", "2"}, RequestBodyLimit: 1},
		"access":    {Engine: "On", CRS: true, RemoveByID: []string{"1", "2"}, RequestBodyAccess: "Off"},
	} {
		if m.Profile() == base.Profile() {
			t.Errorf("%s: the same profile as the base", name)
		}
	}
}
