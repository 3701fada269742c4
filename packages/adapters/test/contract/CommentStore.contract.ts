import { describe, expect, it } from "@effect/vitest"
import { UserStore } from "@herald/core/access/UserStore"
import { PostStore } from "@herald/core/posts/PostStore"
import { CommentId, CommentStore, PostComment } from "@herald/core/workflow/Comment"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import { at, givenOrganization, post, type StoresLayer, T0, user } from "./Fixtures.js"

export const commentStoreContract = (layer: StoresLayer) =>
  describe("CommentStore", () => {
    it.effect("lists a post's comments oldest first with their authors' names (null once removed), only the post's own", () =>
      Effect.gen(function*() {
        const store = yield* CommentStore
        const org = yield* givenOrganization
        const other = yield* givenOrganization
        const users = yield* UserStore
        const author = user(org.id, { email: `a-${randomUUID().slice(0, 6)}@acme.test`, name: "Ann", role: "member" })
        const reviewer = user(org.id, { email: `r-${randomUUID().slice(0, 6)}@acme.test`, name: "Rob", role: "admin" })
        yield* users.insert(author)
        yield* users.insert(reviewer)
        const draft = post(org.id)
        const another = post(org.id)
        const foreign = post(other.id)
        for (const p of [draft, another, foreign]) yield* (yield* PostStore).insert({ post: p, destinations: [] })
        const comment = (
          postId: typeof draft.id,
          authorId: typeof author.id,
          body: string,
          t: number,
          organizationId = org.id
        ) =>
          new PostComment({
            id: CommentId.make(randomUUID()),
            organizationId,
            postId,
            authorId,
            body,
            createdAt: at(T0 + t)
          })
        const second = comment(draft.id, author.id, "Fixed the link", 2)
        const first = comment(draft.id, reviewer.id, "The link is broken", 1)
        yield* store.insert(second)
        yield* store.insert(first)
        yield* store.insert(comment(another.id, author.id, "elsewhere", 3))
        yield* store.insert(comment(foreign.id, author.id, "foreign", 4, other.id))
        expect(yield* store.listForPost(org.id, draft.id)).toEqual([
          { comment: first, authorName: "Rob" },
          { comment: second, authorName: "Ann" }
        ])
        expect(yield* store.listForPost(other.id, draft.id)).toEqual([])
        yield* users.remove(reviewer.id)
        expect((yield* store.listForPost(org.id, draft.id)).map((c) => c.authorName)).toEqual([null, "Ann"])
        yield* (yield* PostStore).delete(org.id, draft.id)
        expect(yield* store.listForPost(org.id, draft.id)).toEqual([])
      }).pipe(Effect.provide(layer)))
  })
