/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A demangled C++ name shortened for the text report: a frame of
 * std::_Rb_tree<std::pair<std::__cxx11::basic_string<char, ...> ...>
 * ran to 1,500 characters. The files (JSON, pprof, folded) and
 * --full-names keep the names whole.
 */
#ifndef CXX_NAMES_H
#define CXX_NAMES_H

/*
 * name with std::__cxx11::basic_string<char, std::char_traits<char>,
 * std::allocator<char> > (and the old ABI's std::basic_string<...>) as
 * std::string, std::__cxx11:: as std::, and each template's arguments
 * nested in another bracket (a template's arguments or a parameter list)
 * as "<…>": std::map<std::string, std::vector<…> >::find(std::pair<…> const&).
 * Operators (operator<, operator<<, operator->, operator()), lambdas
 * ({lambda(int)#1}), (anonymous namespace) and function pointer types keep
 * their brackets paired; a name whose brackets do not pair is returned with
 * the strings replaced but nothing elided. A new string (free), or NULL
 * without memory.
 */
char *cxx_names__short(const char *name);

#endif
