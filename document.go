package quire

import "time"

// Allowed values of document fields.
var (
	ContentTypes = []string{"html", "markdown", "plain"}
	Statuses     = []string{"draft", "review", "published", "archived"}
	Visibilities = []string{"private", "department", "project", "public"}
)

// Document is the current state of a document (its newest version).
type Document struct {
	ID           string
	Title        string
	Content      string
	ContentType  string
	Summary      string
	Status       string
	Visibility   string
	FolderID     string // "" when none
	Tags         []string
	DepartmentID string // "" when none
	ProjectID    string // "" when none
	OwnerID      string
	OwnerName    string
	Version      int
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// DeletedAt, DeletedByID and DeletedByName say when and by whom a
	// document in the trash was moved there; zero for every other document.
	DeletedAt     time.Time
	DeletedByID   string
	DeletedByName string
}

// Version is one saved state of a document.
type Version struct {
	DocumentID    string
	Number        int
	Title         string
	Content       string
	ContentType   string
	Summary       string
	Status        string
	Visibility    string
	Tags          []string
	FolderID      string
	DepartmentID  string
	ProjectID     string
	CreatedAt     time.Time
	CreatedByID   string
	CreatedByName string
}

// Folder holds documents and folders.
type Folder struct {
	ID        string
	Name      string
	ParentID  string // "" at the top
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Visibility is the filter, built by package documents from the actor, that every
// document query applies in its WHERE clause. A store turns it into SQL and
// never decides on its own who sees what.
//
// A document is visible when All is set, or its owner is UserID, or it is
// public, or it is "department" and its department is DepartmentID (never
// when DepartmentID is ""), or it is "project" and UserID is a member of its
// project.
type Visibility struct {
	All          bool
	UserID       string
	DepartmentID string
}

// DocumentFilter selects and orders a page of documents.
type DocumentFilter struct {
	Visibility   Visibility
	Status       string   // "" for any
	VisibilityIs string   // "" for any
	Search       string   // words, each matched as a word or word prefix
	Tags         []string // normalised (trimmed, lower case); all must match
	DepartmentID string
	FolderID     string
	ProjectID    string
	// SortBy is updated_at, created_at, title (ASCII case-insensitive),
	// status (in lifecycle order: draft, review, published, archived) or
	// relevance (best match first when Desc; like updated_at without a
	// search). Ties are broken by id in the same direction.
	SortBy         string
	Desc           bool
	Offset, Limit  int // Limit <= 0: no limit
	IncludeContent bool
	// ContentPrefix, when IncludeContent is false and it is above 0, fills
	// Content with at most its first ContentPrefix characters (for the
	// highlights of a search), so that a page reads a bounded part of each
	// body.
	ContentPrefix int
	// Subfolders widens FolderID to the folder and every folder below it.
	Subfolders bool
	// NoFolder keeps only the documents in no folder (with FolderID "").
	NoFolder bool
}

// TrashFilter selects a page of the trash, newest deletion first.
type TrashFilter struct {
	Visibility    Visibility
	Offset, Limit int // Limit <= 0: no limit
}

// Bounds of a search string, so that a query stays cheap: longer searches,
// or searches with more words, are refused with VALIDATION_ERROR.
const (
	MaxSearchLength = 500 // runes
	MaxSearchWords  = 32
)
