// SPDX-License-Identifier: GPL-2.0
/* ELF facts from an object file: segments, build id, interpreter, symbols, file offsets. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elfsym.h"
#include "util/vec.h"

/* A GOT slot and the symbol its dynamic relocation names. */
struct slot_name {
	uint64_t slot;
	const char *name;	/* in the file's string table: lives as long as the Elf */
	size_t order;		/* the relocation's place in the file: the first one wins */
};

/* The GNU hash table of .dynsym (DT_GNU_HASH), as the dynamic linker reads it. */
struct gnu_hash {
	const uint8_t *data;	/* the section's bytes */
	size_t size;
	Elf_Data *syms;		/* the .dynsym it indexes */
	size_t nr_syms, strndx;
};

struct elf_file {
	int fd;
	Elf *elf;
	char *interp;
	bool is_dyn;
	struct elf_segment *segs;
	size_t nr_segs;
	struct gnu_hash hash;	/* hash.data NULL: none (symbols are then scanned) */
	struct slot_name *slots;	/* by slot, read on the first elf_file__called_symbol */
	size_t nr_slots, cap_slots;
	int slots_err;			/* 1: not read yet; 0 or -errno once read */
};

int elf__load_segments(Elf *elf, struct elf_segment **out, size_t *nr)
{
	struct elf_segment *segs;
	size_t phnum, n = 0;

	*out = NULL;
	*nr = 0;
	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	segs = calloc(phnum ?: 1, sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		segs[n++] = (struct elf_segment){ ph.p_vaddr, ph.p_offset, ph.p_filesz,
						  ph.p_memsz, ph.p_flags };
	}
	if (!n) {
		free(segs);
		return 0;
	}
	*out = segs;
	*nr = n;
	return 0;
}

int elf__mapping_bias(const struct elf_segment *segs, size_t nr, uint64_t page, uint64_t start,
		      uint64_t off, uint64_t *bias)
{
	const struct elf_segment *best = NULL;

	for (size_t i = 0; i < nr; i++) {
		const struct elf_segment *s = &segs[i];
		uint64_t page_off = s->offset & ~(page - 1);

		/* No file contents (.bss alone): nothing of the file is mapped from it. */
		if (!s->filesz || off < page_off || off >= s->offset + s->filesz)
			continue;
		if (!best || off == page_off)
			best = s;
	}
	if (!best)
		return -ENOENT;
	/* start maps off, which is at vaddr - p_offset + off in the object. */
	*bias = start - off - (best->vaddr - best->offset);
	return 0;
}

/* The "GNU" note of type NT_GNU_BUILD_ID in one SHT_NOTE section, or 0. */
static size_t note_build_id(Elf_Scn *scn, uint8_t *id, size_t max, int *err)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) || !nh.n_descsz)
			continue;
		if (nh.n_descsz > max) {
			*err = -E2BIG;
			return 0;
		}
		memcpy(id, (char *)d->d_buf + desc_off, nh.n_descsz);
		return nh.n_descsz;
	}
	return 0;
}

int elf__build_id(Elf *elf, uint8_t *id, size_t max)
{
	Elf_Scn *scn = NULL;
	int err = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		size_t len;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		len = note_build_id(scn, id, max, &err);
		if (len)
			return (int)len;
	}
	return err;
}

int elf__build_id_fd(int fd, uint8_t *id, size_t max)
{
	Elf *elf;
	int len;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		return -ENOEXEC;
	}
	len = elf__build_id(elf, id, max);
	elf_end(elf);
	return len;
}

static void read_gnu_hash(struct elf_file *ef);

static int read_interp(struct elf_file *ef)
{
	size_t nr;
	GElf_Phdr ph;

	if (elf_getphdrnum(ef->elf, &nr))
		return -EINVAL;
	for (size_t i = 0; i < nr; i++) {
		if (!gelf_getphdr(ef->elf, i, &ph) || ph.p_type != PT_INTERP)
			continue;
		/* The file is the target's: its sizes are not to be trusted. */
		if (ef->interp || !ph.p_filesz || ph.p_filesz > PATH_MAX)
			return -ENOEXEC;
		ef->interp = calloc(1, ph.p_filesz + 1);
		if (!ef->interp)
			return -ENOMEM;
		if (pread(ef->fd, ef->interp, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz)
			return -EIO;
	}
	return 0;
}

int elf_file__open(const char *path, struct elf_file **out)
{
	struct elf_file *ef;
	GElf_Ehdr eh;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->slots_err = 1;
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0) {
		err = -errno;
		free(ef);
		return err;
	}
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &eh)) {
		elf_file__close(ef);
		return -ENOEXEC;
	}
	ef->is_dyn = eh.e_type == ET_DYN;
	err = elf__load_segments(ef->elf, &ef->segs, &ef->nr_segs);
	if (!err)
		err = read_interp(ef);
	if (!err)
		read_gnu_hash(ef);
	if (err) {
		elf_file__close(ef);
		return err;
	}
	*out = ef;
	return 0;
}

void elf_file__close(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef->interp);
	free(ef->segs);
	free(ef->slots);
	free(ef);
}

bool elf_file__has_interp(const struct elf_file *ef)
{
	return ef->interp != NULL;
}

const char *elf_file__interp(const struct elf_file *ef)
{
	return ef->interp;
}

/* Virtual address to file offset, through the PT_LOAD segment holding it. */
static int vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < ef->nr_segs; i++) {
		const struct elf_segment *s = &ef->segs[i];

		if (vaddr >= s->vaddr && vaddr < s->vaddr + s->memsz) {
			*off = vaddr - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ENOENT;
}

static bool sym_matches(const GElf_Sym *sym, bool want_func)
{
	int type = GELF_ST_TYPE(sym->st_info);
	int bind = GELF_ST_BIND(sym->st_info);

	if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0)
		return false;
	if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)
		return false;
	if (want_func)
		return type == STT_FUNC || type == STT_GNU_IFUNC;
	return type == STT_OBJECT;
}

/* Look name up in the first section of type sh_type; 0, -ENOENT. */
static int find_in(const struct elf_file *ef, Elf64_Word sh_type, const char *name,
		   bool want_func, GElf_Sym *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sh_type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *n;

			if (!gelf_getsym(data, i, out) || !sym_matches(out, want_func))
				continue;
			n = elf_strptr(ef->elf, sh.sh_link, out->st_name);
			if (n && !strcmp(n, name))
				return 0;
		}
	}
	return -ENOENT;
}

/* The file's SHT_GNU_HASH section and the symbol table it indexes, into ef->hash. */
static void read_gnu_hash(struct elf_file *ef)
{
	Elf_Scn *scn = NULL, *syms;
	GElf_Shdr sh, symsh;
	Elf_Data *d;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_GNU_HASH)
			continue;
		syms = elf_getscn(ef->elf, sh.sh_link);
		d = elf_getdata(scn, NULL);
		if (!syms || !d || !d->d_buf || !gelf_getshdr(syms, &symsh) ||
		    symsh.sh_type != SHT_DYNSYM || !symsh.sh_entsize)
			return;
		ef->hash = (struct gnu_hash){ d->d_buf, d->d_size, elf_getdata(syms, NULL),
					      symsh.sh_size / symsh.sh_entsize, symsh.sh_link };
		if (!ef->hash.syms)
			ef->hash.data = NULL;
		return;
	}
}

/* The dynamic linker's hash of a symbol name (DJB's, as DT_GNU_HASH uses it). */
static uint32_t gnu_hash_of(const char *name)
{
	uint32_t h = 5381;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	return h;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Symbol i of the table, if it is name and matches: what the dynamic linker
 * would bind to.
 */
static bool hashed_sym_is(const struct elf_file *ef, size_t i, const char *name, bool want_func,
			  GElf_Sym *out)
{
	const char *n;

	if (i >= ef->hash.nr_syms || !gelf_getsym(ef->hash.syms, (int)i, out) ||
	    !sym_matches(out, want_func))
		return false;
	n = elf_strptr(ef->elf, ef->hash.strndx, out->st_name);
	return n && !strcmp(n, name);
}

/*
 * name in .dynsym through its GNU hash table, the way the dynamic linker
 * looks it up: a handful of entries compared instead of all of them (the
 * allocator's 34 names in the 316 objects of a PyTorch process, libtorch's
 * tens of thousands of symbols among them, took 0.1 s to scan). The chain
 * keeps .dynsym's order, so the first match is the one a scan finds. 0,
 * -ENOENT, or -ENOSYS without a well-formed table (then scan).
 */
static int find_hashed(const struct elf_file *ef, const char *name, bool want_func,
		       GElf_Sym *out)
{
	const struct gnu_hash *gh = &ef->hash;
	uint32_t nbuckets, symoffset, bloom_size, shift, h = gnu_hash_of(name), sym;
	size_t chain_at, nr_chain;
	uint64_t word, mask;

	if (!gh->data || gh->size < 16)
		return -ENOSYS;
	nbuckets = u32_at(gh->data);
	symoffset = u32_at(gh->data + 4);
	bloom_size = u32_at(gh->data + 8);
	shift = u32_at(gh->data + 12);
	chain_at = 16 + (size_t)bloom_size * 8 + (size_t)nbuckets * 4;
	if (!nbuckets || !bloom_size || chain_at > gh->size)
		return -ENOSYS;
	nr_chain = (gh->size - chain_at) / 4;
	memcpy(&word, gh->data + 16 + (size_t)(h / 64 % bloom_size) * 8, sizeof(word));
	mask = 1ull << (h % 64) | 1ull << ((h >> (shift % 32)) % 64);
	if ((word & mask) != mask)
		return -ENOENT;
	sym = u32_at(gh->data + 16 + (size_t)bloom_size * 8 + (size_t)(h % nbuckets) * 4);
	for (; sym >= symoffset && sym - symoffset < nr_chain; sym++) {
		uint32_t h2 = u32_at(gh->data + chain_at + (size_t)(sym - symoffset) * 4);

		if ((h2 | 1) == (h | 1) && hashed_sym_is(ef, sym, name, want_func, out))
			return 0;
		if (h2 & 1)
			break;	/* the end of the bucket's chain */
	}
	return -ENOENT;
}

static int find_sym(const struct elf_file *ef, const char *name, bool dynsym_only,
		    bool want_func, GElf_Sym *sym)
{
	int err = find_hashed(ef, name, want_func, sym);

	if (err == -ENOSYS)
		err = find_in(ef, SHT_DYNSYM, name, want_func, sym);
	if (!err)
		return 0;
	if (dynsym_only)
		return -ENOENT;
	return find_in(ef, SHT_SYMTAB, name, want_func, sym);
}

int elf_file__find_func_size(const struct elf_file *ef, const char *name, bool dynsym_only,
			     uint64_t *vaddr, uint64_t *file_offset, uint64_t *size)
{
	GElf_Sym sym;
	int err;

	err = find_sym(ef, name, dynsym_only, true, &sym);
	if (err)
		return err;
	/* An IFUNC's address is its resolver, not the code that runs. */
	if (GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC)
		return -EOPNOTSUPP;
	*vaddr = sym.st_value;
	*size = sym.st_size;
	return vaddr_to_offset(ef, sym.st_value, file_offset);
}

int elf_file__find_func(const struct elf_file *ef, const char *name, bool dynsym_only,
			uint64_t *vaddr, uint64_t *file_offset)
{
	uint64_t size;

	return elf_file__find_func_size(ef, name, dynsym_only, vaddr, file_offset, &size);
}

int elf_file__find_object(const struct elf_file *ef, const char *name, uint64_t *vaddr)
{
	GElf_Sym sym;
	int err;

	err = find_sym(ef, name, false, false, &sym);
	if (!err)
		*vaddr = sym.st_value;
	return err;
}

int elf_file__load_bias(const struct elf_file *ef, uint64_t start, uint64_t off, uint64_t *bias)
{
	return elf__mapping_bias(ef->segs, ef->nr_segs, 4096, start, off, bias);
}

/* Bytes of the file at a virtual address. */
static int read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off;
	int err = vaddr_to_offset(ef, vaddr, &off);

	if (err)
		return err;
	return pread(ef->fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

int elf_file__read(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	return read_vaddr(ef, vaddr, buf, len);
}

const struct elf_segment *elf_file__segments(const struct elf_file *ef, size_t *nr)
{
	*nr = ef->nr_segs;
	return ef->segs;
}

static int32_t rel32(const unsigned char *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/*
 * The GOT slot a call ending at ret goes through: `call stub` whose stub is
 * `[endbr64] [bnd] jmp *slot(%rip)` (.plt, .plt.sec, .plt.got), or a
 * `call *slot(%rip)` (-fno-plt).
 */
static int call_slot(const struct elf_file *ef, uint64_t ret, uint64_t *slot)
{
	unsigned char call[6], stub[16];
	uint64_t target;
	size_t i = 0;

	if (ret < sizeof(call) || read_vaddr(ef, ret - sizeof(call), call, sizeof(call)))
		return -ENOENT;
	if (call[0] == 0xff && call[1] == 0x15) {
		*slot = ret + (uint64_t)(int64_t)rel32(call + 2);
		return 0;
	}
	if (call[1] != 0xe8)
		return -ENOENT;
	target = ret + (uint64_t)(int64_t)rel32(call + 2);
	if (read_vaddr(ef, target, stub, sizeof(stub)))
		return -ENOENT;
	if (!memcmp(stub, "\xf3\x0f\x1e\xfa", 4))
		i = 4;
	if (stub[i] == 0xf2)
		i++;
	if (stub[i] != 0xff || stub[i + 1] != 0x25)
		return -ENOENT;
	*slot = target + i + 6 + (uint64_t)(int64_t)rel32(stub + i + 2);
	return 0;
}

/* The named slots of one SHT_RELA section, appended to ef->slots. */
static int read_rela_slots(struct elf_file *ef, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Scn *symscn = elf_getscn(ef->elf, sh->sh_link);
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	GElf_Shdr symsh;

	if (!data || !syms || !gelf_getshdr(symscn, &symsh))
		return 0;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Rela rela;
		GElf_Sym sym;
		const char *name;

		/* Symbol 0 (R_X86_64_RELATIVE, most of a big library's) names nothing. */
		if (!gelf_getrela(data, (int)i, &rela) || !GELF_R_SYM(rela.r_info) ||
		    !gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym))
			continue;
		name = elf_strptr(ef->elf, symsh.sh_link, sym.st_name);
		if (!name)
			continue;
		if (vec__reserve_min(&ef->slots, &ef->cap_slots, ef->nr_slots + 1,
				     sizeof(*ef->slots), 256))
			return -ENOMEM;
		ef->slots[ef->nr_slots] = (struct slot_name){ rela.r_offset, name, ef->nr_slots };
		ef->nr_slots++;
	}
	return 0;
}

static int slot_cmp(const void *a, const void *b)
{
	const struct slot_name *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Every dynamic relocation that names a symbol, by slot: read once, so that
 * a lookup is a binary search instead of a walk of every relocation (libtorch
 * has 187,000, and a report asks about thousands of call sites).
 */
static int read_slots(struct elf_file *ef)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err = 0;

	while (!err && (scn = elf_nextscn(ef->elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && sh.sh_entsize)
			err = read_rela_slots(ef, scn, &sh);
	if (!err)
		qsort(ef->slots, ef->nr_slots, sizeof(*ef->slots), slot_cmp);
	return err;
}

/* The symbol of the dynamic relocation that fills slot. */
static int slot_symbol(struct elf_file *ef, uint64_t slot, const char **name)
{
	size_t lo = 0, hi;

	if (ef->slots_err > 0)
		ef->slots_err = read_slots(ef);
	if (ef->slots_err)
		return ef->slots_err;
	/* The first entry at slot or above. */
	hi = ef->nr_slots;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ef->slots[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ef->nr_slots || ef->slots[lo].slot != slot)
		return -ENOENT;
	*name = ef->slots[lo].name;
	return 0;
}

int elf_file__called_symbol(struct elf_file *ef, uint64_t ret_vaddr, const char **name)
{
	uint64_t slot;
	int err = call_slot(ef, ret_vaddr, &slot);

	return err ? err : slot_symbol(ef, slot, name);
}
