// SPDX-License-Identifier: GPL-2.0
/* report/cxx_names.c: C++ names shortened for the text report, brackets kept paired. */
#include <stdlib.h>
#include <string.h>
#include "report/cxx_names.h"
#include "unit.h"

#define E "\xe2\x80\xa6"
#define STR "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"

static bool shortens(const char *in, const char *want)
{
	char *got = cxx_names__short(in);
	bool ok = got && !strcmp(got, want);

	if (!ok)
		fprintf(stderr, "  %s\n  gave %s\n  want %s\n", in, got ? got : "(null)", want);
	free(got);
	return ok;
}

TEST(cxx_names_string_and_depth)
{
	ASSERT(shortens("main", "main"));
	ASSERT(shortens("leak_here (v.c:3)", "leak_here (v.c:3)"));
	ASSERT(shortens("FlagRegister<" STR ">::SetDescription(" STR " const&, FlagDescription<" STR
			"> const&)",
			"FlagRegister<std::string>::SetDescription(std::string const&, "
			"FlagDescription<" E "> const&)"));
	/* the demangler's space between closing brackets goes with the string's arguments */
	ASSERT(shortens("FlagRegister<" STR " >::GetRegister()", "FlagRegister<std::string>::GetRegister()"));
	ASSERT(shortens("std::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create(unsigned long&, unsigned long)",
			"std::string::_M_create(unsigned long&, unsigned long)"));
	ASSERT(shortens("std::__cxx11::list<int, std::allocator<int> >::push_back(int const&)",
			"std::list<int, std::allocator<" E "> >::push_back(int const&)"));
	/* fstminimize's frame: the return type, the class's and the method's arguments */
	ASSERT(shortens("std::_Rb_tree_iterator<std::pair<" STR " const, int> > std::_Rb_tree<" STR
			", std::pair<" STR " const, int>, std::_Select1st<std::pair<" STR " const, int> >, "
			"std::less<" STR ">, std::allocator<std::pair<" STR " const, int> > >::"
			"_M_emplace_hint_unique<std::pair<" STR ", int> >(std::_Rb_tree_const_iterator<"
			"std::pair<" STR " const, int> >, std::pair<" STR ", int>&&)",
			"std::_Rb_tree_iterator<std::pair<" E "> > std::_Rb_tree<std::string, std::pair<" E
			">, std::_Select1st<" E ">, std::less<" E ">, std::allocator<" E "> >::"
			"_M_emplace_hint_unique<std::pair<" E "> >(std::_Rb_tree_const_iterator<" E ">, "
			"std::pair<" E ">&&)"));
	return true;
}

TEST(cxx_names_operators)
{
	ASSERT(shortens("bool std::operator< <char>(std::vector<int> const&, int)",
			"bool std::operator< <char>(std::vector<" E "> const&, int)"));
	ASSERT(shortens("std::basic_ostream<char>& std::operator<< <std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
			"std::basic_ostream<char>& std::operator<< <std::char_traits<" E "> >(std::basic_ostream<" E ">&, char const*)"));
	ASSERT(shortens("Foo<Bar<int> >::operator->() const", "Foo<Bar<" E "> >::operator->() const"));
	ASSERT(shortens("Foo<int>::operator()(std::vector<int>&)", "Foo<int>::operator()(std::vector<" E ">&)"));
	ASSERT(shortens("Foo<int>::operator>>(int)", "Foo<int>::operator>>(int)"));
	ASSERT(shortens("Foo<int>::operator<=(Foo<int> const&) const", "Foo<int>::operator<=(Foo<" E "> const&) const"));
	ASSERT(shortens("Foo::operator new[](unsigned long)", "Foo::operator new[](unsigned long)"));
	ASSERT(shortens("my_operator<a<b> >(x)", "my_operator<a<" E "> >(x)"));	/* not the keyword */
	return true;
}

TEST(cxx_names_lambdas_namespaces_pointers)
{
	ASSERT(shortens("run(std::vector<int> const&)::{lambda(std::map<int, int> const&)#1}::operator()(std::map<int, int> const&) const",
			"run(std::vector<" E "> const&)::{lambda(std::map<" E "> const&)#1}::operator()(std::map<" E "> const&) const"));
	ASSERT(shortens("(anonymous namespace)::Pool<std::vector<int> >::grow((anonymous namespace)::Arena<int>*)",
			"(anonymous namespace)::Pool<std::vector<" E "> >::grow((anonymous namespace)::Arena<" E ">*)"));
	ASSERT(shortens("fst::GenericRegister<std::pair<" STR ", " STR " >, void (*)(fst::script::WithReturnValue<bool, std::tuple<int> >*), Reg>::SetEntry(std::pair<" STR ", " STR " > const&, void (* const&)(fst::script::WithReturnValue<bool, std::tuple<int> >*))",
			"fst::GenericRegister<std::pair<" E ">, void (*)(fst::script::WithReturnValue<" E ">*), Reg>::SetEntry(std::pair<" E "> const&, void (* const&)(fst::script::WithReturnValue<" E ">*))"));
	ASSERT(shortens("decltype (({parm#1}->get)()) f<Box<int> >(Box<int>*)",
			"decltype (({parm#1}->get)()) f<Box<" E "> >(Box<" E ">*)"));
	return true;
}

TEST(cxx_names_unpaired_left_whole)
{
	/* cut short, or odd: the strings replaced, nothing elided, nothing lost */
	ASSERT(shortens("Foo<Bar<int> >::baz(std::vector<int", "Foo<Bar<int> >::baz(std::vector<int"));
	ASSERT(shortens("a>b<c<d>>", "a>b<c<d>>"));
	ASSERT(shortens("f(" STR, "f(std::string"));
	ASSERT(shortens("Foo<a(b>)", "Foo<a(b>)"));
	ASSERT(shortens("", ""));
	return true;
}

/* Found by make fuzz: a name that begins with '>' read the byte before it; many "<…>" outgrew twice the name. */
TEST(cxx_names_edges_in_bounds)
{
	ASSERT(shortens(">", ">"));
	ASSERT(shortens("->x", "->x"));
	ASSERT(shortens("(<><><><><><><><>)", "(<" E "><" E "><" E "><" E "><" E "><" E "><" E "><" E ">)"));
	ASSERT(shortens("(<a><b><c><d>", "(<a><b><c><d>"));	/* unpaired: left whole */
	return true;
}
