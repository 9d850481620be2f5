package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// afterMigration holds the work a migration needs Go for, run after the
// migration's SQL in its transaction.
var afterMigration = map[string]func(ctx context.Context, tx pgx.Tx) error{
	"0015_search_tags.sql": reindexTags,
}

// reindexTags computes again the search vector of every document that has
// tags (in the trash too), now that the vector holds them: in pages of ids,
// so that memory stays bounded whatever the number of documents.
func reindexTags(ctx context.Context, tx pgx.Tx) error {
	const page = 500
	after := ""
	for {
		rows, err := tx.Query(ctx, `SELECT d.id, d.title, d.summary, d.content,
			ARRAY(SELECT t.tag FROM document_tags t WHERE t.document_id = d.id ORDER BY t.position)
			FROM documents d
			WHERE d.id > $1 AND EXISTS (SELECT 1 FROM document_tags t WHERE t.document_id = d.id)
			ORDER BY d.id LIMIT $2`, after, page)
		if err != nil {
			return fmt.Errorf("reindex tags: %w", err)
		}
		b := &pgx.Batch{}
		var (
			id, title, summary, content string
			tags                        []string
		)
		_, err = pgx.ForEachRow(rows, []any{&id, &title, &summary, &content, &tags}, func() error {
			b.Queue(`UPDATE documents SET search = $1::tsvector WHERE id = $2`, searchVector(title, summary, content, tags), id)
			after = id
			return nil
		})
		if err != nil {
			return fmt.Errorf("reindex tags: %w", err)
		}
		if b.Len() == 0 {
			return nil
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("reindex tags: %w", err)
		}
	}
}
