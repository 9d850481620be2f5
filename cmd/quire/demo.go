package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"quire"
	"quire/auth"
	"quire/documents"
)

// loadDemo fills an empty database with departments, projects, users of
// every default role, and documents, and prints the demo accounts.
func loadDemo(ctx context.Context, store quire.Store, as *auth.Service, stdout io.Writer) error {
	people := []auth.NewUser{
		{Email: "ada@example.com", Name: "Ada Lovelace", Role: "admin", Department: "Engineering"},
		{Email: "grace@example.com", Name: "Grace Hopper", Role: "editor", Department: "Engineering"},
		{Email: "linus@example.com", Name: "Linus Pauling", Role: "editor", Department: "Research"},
		{Email: "mary@example.com", Name: "Mary Jackson", Role: "editor", Department: "Support"},
		{Email: "alan@example.com", Name: "Alan Turing", Role: "viewer", Department: "Engineering"},
		{Email: "rosalind@example.com", Name: "Rosalind Franklin", Role: "viewer", Department: "Research"},
		{Email: "guest@example.com", Name: "Guest Reader", Role: "guest"},
	}
	var users []quire.User
	fmt.Fprintln(stdout, "Demo accounts (shown only this once):")
	for _, p := range people {
		p.Password = generatePassword()
		u, _, err := as.CreateUser(ctx, p)
		if err != nil {
			return fmt.Errorf("demo user %s: %w", p.Email, err)
		}
		users = append(users, *u)
		fmt.Fprintf(stdout, "  %-22s %-7s %s\n", p.Email, p.Role, p.Password)
	}
	projects := []struct {
		name    string
		members []int // indexes into users
	}{
		{"Apollo", []int{0, 1, 3, 4}},
		{"Zephyr", []int{1, 2, 5}},
	}
	for _, p := range projects {
		pr, err := store.CreateProject(ctx, p.name)
		if err != nil {
			return fmt.Errorf("demo project %s: %w", p.name, err)
		}
		for _, i := range p.members {
			if err := store.AddProjectMember(ctx, pr.ID, users[i].ID); err != nil {
				return fmt.Errorf("demo project %s: %w", p.name, err)
			}
		}
	}
	if err := documents.SeedDemo(ctx, store, users, time.Now()); err != nil {
		return fmt.Errorf("demo documents: %w", err)
	}
	fmt.Fprintln(stdout, "Demo data loaded: 3 departments, 2 projects, 7 users and their documents.")
	return nil
}
