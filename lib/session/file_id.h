/* A file's identity (device and inode) with its place in a list, and their order: how the session
 * and the folder walk find two names of one file. Internal to lib/session/. */
#ifndef MEMSCOPE_SESSION_FILE_ID_H
#define MEMSCOPE_SESSION_FILE_ID_H

#include <stddef.h>
#include <sys/types.h>

struct ms__file_id {
	dev_t dev;
	ino_t ino;
	size_t at; /* its place in the list the ids were taken from */
};

/* qsort's order of struct ms__file_id: by device, inode, then place (the first name first). */
static inline int ms__file_id_cmp(const void *a, const void *b)
{
	const struct ms__file_id *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

#endif
