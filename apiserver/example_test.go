package apiserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/apiserver/internal/memstore"
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
	s, err := apiserver.New(apiserver.Config{
		Store:         memstore.New(memstore.Options{}),
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
