/*
 * The generator's table of vector files: each file's name and title, and the
 * file each case of the case table (cases.c) goes into. A new file is a new
 * row here (and a new branch of amg_file_of).
 */
#ifndef ATTNMETA_CONFORMANCE_VECTOR_FILES_H
#define ATTNMETA_CONFORMANCE_VECTOR_FILES_H

typedef struct amg_vector_file {
  const char *name;
  const char *title[3]; /* comment lines at the top of the file; NULL ends early */
  int version;          /* the format version it is written in; 0: 1 */
} amg_vector_file;

extern const amg_vector_file amg_files[];
extern const int amg_num_files;

/* The index into amg_files of the file the case of this name belongs in. */
int amg_file_of(const char *name);
/* The same for a case of the DSV4 case table (cases_dsv4.c). */
int amg_dsv4_file_of(const char *name);

#endif /* ATTNMETA_CONFORMANCE_VECTOR_FILES_H */
