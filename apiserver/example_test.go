package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
)

type note struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Text           string `json:"text,omitempty"`
}

// ExampleNew serves one cluster-scoped resource and creates an object.
func ExampleNew() {
	notes := &api.ResourceInfo{
		Version: "v1", Resource: "notes", Singular: "note", Kind: "Note", ListKind: "NoteList",
		New: func() api.Object { return &note{} },
	}
	dir, err := os.MkdirTemp("", "skiff-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	st, err := store.OpenBolt(context.Background(), filepath.Join(dir, "skiff.db"), store.BoltOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	s, err := apiserver.New(apiserver.Config{
		Store:         st,
		Resources:     []*api.ResourceInfo{notes},
		Authenticator: apiserver.StaticTokens{"secret": {Name: "admin"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewTLSServer(s.Handler())
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/notes", strings.NewReader(`{"metadata":{"name":"hello"},"text":"hi"}`))
	req.Header.Set("Authorization", "Bearer secret")
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	res.Body.Close()
	fmt.Println(res.Status)
	fmt.Println(apiserver.KeyFor(notes, "", "hello"))
	// Output:
	// 201 Created
	// /registry/core/notes/hello
}
